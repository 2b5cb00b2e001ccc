import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stderrLogger, type LogLevel } from '../../src/runtime/logger.js';
import type { Logger } from '../../src/runtime/api.js';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { createTaskServer } from '../../src/server/index.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { waitFor } from '../helpers/wait.js';
import { rpc } from '../server/support.js';

type Line = Record<string, unknown>;

async function session(level: LogLevel) {
  const lines: string[] = [];
  const logger = stderrLogger(level, 'json', (line) => void lines.push(line));
  const store = new MemoryTaskStore();
  const app = createTaskServer({
    store,
    logger,
    runtime: { logger },
    auth: { tokens: { 'tok-a': 'alice' } },
  });
  app.tool(
    'quick',
    { description: 'q', task: { mode: 'optional', pollIntervalMs: 20 } },
    async () => ({
      content: [{ type: 'text', text: 'done' }],
    }),
  );
  const { url } = await app.listen(0, '127.0.0.1');
  const created = await rpc(
    url,
    'tools/call',
    { name: 'quick', arguments: {} },
    { bearer: 'tok-a' },
  );
  const taskId = String(created.body.result?.['taskId']);
  await waitFor('completion', async () => {
    const got = await rpc(url, 'tasks/get', { taskId }, { bearer: 'tok-a' });
    return got.body.result?.['status'] === 'completed' ? true : undefined;
  });
  await app.close(200);
  await store.close();
  return { taskId, parsed: lines.map((line) => JSON.parse(line) as Line) };
}

describe('logs people can use (Build 4)', () => {
  it('debug: one line per request with method, tool, task id, principal, status, duration', async () => {
    const { taskId, parsed } = await session('debug');
    const requests = parsed.filter((line) => line['message'] === 'request');
    const call = requests.find((line) => line['method'] === 'tools/call');
    assert.ok(call, JSON.stringify(parsed));
    assert.equal(call['level'], 'debug');
    assert.equal(call['tool'], 'quick');
    assert.equal(call['taskId'], taskId);
    assert.equal(call['principal'], 'alice');
    assert.equal(call['status'], 200);
    assert.equal(typeof call['durationMs'], 'number');
    const gets = requests.filter((line) => line['method'] === 'tasks/get');
    assert.ok(gets.length >= 1);
    assert.ok(gets.every((line) => line['taskId'] === taskId));
  });

  it('info: one line per task transition and none per request; debug has more', async () => {
    const info = await session('info');
    const debug = await session('debug');
    assert.equal(info.parsed.filter((line) => line['message'] === 'request').length, 0);
    const transitions = info.parsed.filter((line) => line['message'] === 'task transition');
    assert.deepEqual(
      transitions.map((line) => [line['taskId'], line['from'], line['to'], line['level']]),
      [[info.taskId, 'working', 'completed', 'info']],
    );
    assert.ok(info.parsed.some((line) => line['message'] === 'task created'));
    assert.ok(debug.parsed.length > info.parsed.length);
  });

  it('text format: one readable line per record', () => {
    const lines: string[] = [];
    const logger = stderrLogger('debug', 'text', (line) => void lines.push(line));
    logger.debug?.('request', { method: 'tools/call', tool: 'quick', note: 'has space' });
    assert.equal(lines.length, 1);
    assert.match(
      lines[0] ?? '',
      /^\d{4}-\d\d-\d\dT[\d:.]+Z DEBUG request method=tools\/call tool=quick note="has space"\n$/,
    );
  });

  it('no creation listener when info lines are dropped: a shared store reads nothing back for it', async () => {
    const creationListeners = async (logger: Logger) => {
      const store = new MemoryTaskStore();
      const runtime = new TaskRuntime({ store, tools: { get: () => undefined }, logger });
      runtime.start();
      const count = store.events.listenerCount('task:created');
      await runtime.stop(0);
      await store.close();
      return count;
    };
    const dropped = () => undefined;
    assert.equal(await creationListeners(stderrLogger('warn', 'json', dropped)), 0);
    assert.equal(await creationListeners(stderrLogger('info', 'json', dropped)), 1);
    // A logger that cannot say what it drops gets every line, as before.
    const plain = { info: dropped, warn: dropped, error: dropped };
    assert.equal(await creationListeners(plain), 1);
    assert.equal(stderrLogger('error').enabled?.('warn'), false);
    assert.equal(stderrLogger('debug').enabled?.('debug'), true);
  });

  it('no debug function at all above debug level', () => {
    assert.equal(stderrLogger('info').debug, undefined);
  });
});
