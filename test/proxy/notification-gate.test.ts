import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NotificationGate } from '../../src/proxy/notification-gate.js';
import { JsonLineReader, MAX_LINE_BYTES } from '../../src/proxy/json-lines.js';
import { memoryLogger } from './support.js';
import { waitFor } from '../helpers/wait.js';

type Sent = { method?: string; id?: number; params?: Record<string, unknown> };

function gated(rate = { perSecond: 100, burst: 10 }) {
  const logger = memoryLogger();
  const delivered: Sent[] = [];
  const transport: { onmessage?: unknown } = {
    onmessage: (message: Sent) => void delivered.push(message),
  };
  const gate = new NotificationGate(rate, logger, 'test upstream');
  gate.guard(transport);
  const send = transport.onmessage as (message: Sent) => void;
  return { gate, send, delivered, logger };
}

const progress = (token: string, i: number): Sent => ({
  method: 'notifications/progress',
  params: { progressToken: token, progress: i },
});

describe('the upstream notification gate', () => {
  it('passes a burst, then coalesces to the latest of each kind at the rate', async () => {
    const { gate, send, delivered, logger } = gated();
    for (let i = 0; i < 1000; i++) send(progress('a', i));
    for (let i = 0; i < 1000; i++) send(progress('b', i));
    assert.equal(delivered.length, 10, 'the burst passes at once, the rest is held');
    await waitFor('the held notifications', () => (delivered.length === 12 ? true : undefined));
    const last = delivered
      .slice(-2)
      .map((m) => [m.params?.['progressToken'], m.params?.['progress']]);
    assert.deepEqual(last, [
      ['a', 999],
      ['b', 999],
    ]);
    const warnings = logger.lines.filter((line) => line.level === 'warn');
    assert.equal(warnings.length, 1, 'one warning for the burst');
    const over = await waitFor('the burst summary', () =>
      logger.lines.find((line) => line.message === 'upstream notification burst over'),
    );
    assert.equal(over['coalesced'], 1988);
    gate.stop();
  });

  it('hands what it held to the client before a response', () => {
    const { gate, send, delivered } = gated({ perSecond: 1, burst: 1 });
    send(progress('a', 1));
    send(progress('a', 2));
    send(progress('a', 3));
    send({ id: 7 });
    assert.deepEqual(
      delivered.map((m) => m.id ?? m.params?.['progress']),
      [1, 3, 7],
    );
    gate.stop();
  });

  it('drops distinct notifications past what it may hold, and says how many', async () => {
    const { gate, send, delivered, logger } = gated({ perSecond: 1000, burst: 1 });
    for (let i = 0; i < 5000; i++) send(progress(`t${i}`, i));
    await waitFor('the held ones', () => (delivered.length >= 257 ? true : undefined));
    const over = await waitFor('the burst summary', () =>
      logger.lines.find((line) => line.message === 'upstream notification burst over'),
    );
    assert.equal(delivered.length, 257, 'one at once, then the 256 held');
    assert.equal(over['dropped'], 5000 - 257);
    gate.stop();
  });

  it('never holds requests or responses', () => {
    const { gate, send, delivered } = gated({ perSecond: 1, burst: 1 });
    for (let i = 0; i < 100; i++) send({ id: i, method: 'elicitation/create' });
    assert.equal(delivered.length, 100);
    gate.stop();
  });
});

describe('the upstream line reader', () => {
  it('reads messages across chunks and reports what is not one, without throwing', () => {
    const reader = new JsonLineReader();
    const messages: unknown[] = [];
    const errors: string[] = [];
    const push = (text: string) =>
      reader.push(
        Buffer.from(text),
        (m) => messages.push(m),
        (e) => errors.push(e.message),
      );
    push('{"jsonrpc":"2.0","method":"notifications/x","params":{"a":1}}\n{"jsonrpc":"2.0",');
    push('"id":1,"result":{}}\r\nnot json\n{"jsonrpc":"2.0","method":"m","extra":1}\n');
    assert.equal(messages.length, 2);
    assert.equal(errors.length, 2, errors.join(' | '));
    push('x'.repeat(MAX_LINE_BYTES + 10));
    push('y'.repeat(1000));
    push('z\n{"jsonrpc":"2.0","id":2,"result":{}}\n');
    assert.equal(messages.length, 3, 'the overlong line is skipped whole, the next one read');
    assert.equal(errors.length, 3);
    assert.match(errors[2] ?? '', /longer than/);
  });
});
