import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SchemaChecker } from '../../src/client/schema-check.js';
import { SseLines, readBoundedText, readSseMessages } from '../../src/client/sse.js';

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

const STREAM =
  ': keep-alive\r\n\r\nevent: message\r\ndata: {"id":1}\r\n\r\n' +
  'data: {"id":\ndata: 2}\n\nid: 7\rdata: {"id":3}\r\rdata: not json\n\ndata:{"id":4}\n\n';

describe('client SSE reader', () => {
  it('gives the same events however the stream is cut (CR, LF and CRLF line ends)', () => {
    const whole = new SseLines(1024).push(STREAM, true);
    assert.deepEqual(whole, ['{"id":1}', '{"id":\n2}', '{"id":3}', 'not json', '{"id":4}']);
    for (let size = 1; size <= 7; size++) {
      const lines = new SseLines(1024);
      const events: string[] = [];
      for (let at = 0; at < STREAM.length; at += size) {
        events.push(...lines.push(STREAM.slice(at, at + size)));
      }
      events.push(...lines.push('', true));
      assert.deepEqual(events, whole, `chunks of ${size}`);
    }
  });

  it('reads JSON messages until stop says so, skipping what is not JSON', async () => {
    const seen: unknown[] = [];
    await readSseMessages(streamOf(STREAM.match(/[\s\S]{1,5}/g) ?? []), (message) => {
      seen.push(message);
      return (message as { id: number }).id === 3;
    });
    assert.deepEqual(seen, [{ id: 1 }, { id: 2 }, { id: 3 }]);
  });

  it('fails an event over the bound instead of buffering it, also while one line grows', () => {
    const big = new SseLines(100);
    assert.throws(() => big.push(`data: ${'x'.repeat(60)}\ndata: ${'y'.repeat(60)}\n`), /over 100/);
    const growing = new SseLines(100);
    growing.push('data: ');
    assert.throws(() => {
      for (let i = 0; i < 20; i++) growing.push('z'.repeat(10));
    }, /over 100 bytes/);
  });

  it('reads a JSON body up to its bound and refuses a larger one', async () => {
    assert.equal(await readBoundedText(streamOf(['{"a":', '1}']), 10), '{"a":1}');
    await assert.rejects(readBoundedText(streamOf(['x'.repeat(8), 'y'.repeat(8)]), 10), /over 10/);
  });
});

describe('client schema cache', () => {
  it('stays bounded however many distinct schemas servers send', () => {
    const checker = new SchemaChecker();
    for (let i = 0; i < 600; i++) {
      const schema = { type: 'object', properties: { [`p${i}`]: { type: 'number' } } };
      assert.deepEqual(checker.check(schema, { [`p${i}`]: 1 }), []);
      assert.equal(checker.check(schema, { [`p${i}`]: 'x' }).length, 1);
    }
    assert.ok(checker.cachedSchemas <= 256, `${checker.cachedSchemas} schemas cached`);
    assert.ok(checker.cachedSchemas > 0);
  });
});
