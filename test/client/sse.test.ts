import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runListenStream } from '../../src/client/listen-stream.js';
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
    }, /over 100 characters/);
  });

  it('does linear work for one large event fed in many small chunks', () => {
    // Re-splitting (or re-joining) the buffer on each chunk would cost ~size²/(2·chunk): about
    // 10^11 characters here. A linear reader scans each character a few times.
    const payload = JSON.stringify({ id: 9, text: 'x'.repeat(2_000_000) });
    const stream = `data: ${payload}\n\n`;
    const lines = new SseLines(4_000_000);
    const events: string[] = [];
    for (let at = 0; at < stream.length; at += 5)
      events.push(...lines.push(stream.slice(at, at + 5)));
    assert.deepEqual(events, [payload]);
    assert.ok(
      lines.work <= 4 * stream.length,
      `${lines.work} characters of work for ${stream.length}`,
    );
    const manyLines = new SseLines(4_000_000);
    const multi = `${'data: 0123456789\n'.repeat(50_000)}\n`;
    for (let at = 0; at < multi.length; at += 3) manyLines.push(multi.slice(at, at + 3));
    assert.ok(manyLines.work <= 4 * multi.length, `${manyLines.work} for ${multi.length}`);
  });

  it('fails the read of a stream whose event passes the bound, fed in small chunks', async () => {
    const chunks = [
      'data: {"id":1}\n\n',
      'data: "',
      ...Array.from({ length: 100 }, () => 'y'.repeat(16)),
    ];
    const seen: unknown[] = [];
    await assert.rejects(
      readSseMessages(
        streamOf(chunks),
        (message) => {
          seen.push(message);
          return false;
        },
        1000,
      ),
      (error: Error & { code?: string }) =>
        error.code === 'PROTOCOL' && /SSE event over 1000 characters/.test(error.message),
    );
    assert.deepEqual(seen, [{ id: 1 }], 'the events before it were delivered');
  });

  it('reads a JSON body up to its bound and refuses a larger one', async () => {
    assert.equal(await readBoundedText(streamOf(['{"a":', '1}']), 10), '{"a":1}');
    await assert.rejects(readBoundedText(streamOf(['x'.repeat(8), 'y'.repeat(8)]), 10), /over 10/);
  });
});

describe('client listen stream', () => {
  it('reads a refusal body only up to a small bound (an endless one does not hang it)', async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 65_536;
        controller.enqueue(new Uint8Array(65_536).fill(32));
      },
    });
    const refusing = (async () =>
      new Response(endless, {
        status: 404,
        headers: { 'content-type': 'application/json' },
      })) as unknown as typeof fetch;
    const end = await runListenStream(
      {
        url: 'http://127.0.0.1:9/mcp',
        fetch: refusing,
        framing: {
          protocolVersion: '2026-07-28',
          clientInfo: { name: 't', version: '1' },
          clientCapabilities: {},
        },
      },
      ['task-1'],
      { acknowledged: () => undefined, task: () => undefined, invalid: () => undefined },
      new AbortController().signal,
    );
    assert.deepEqual(end, { kind: 'refused', unsupported: true });
    assert.ok(pulled <= 4 * 65_536, `${pulled} bytes read`);
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
