import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { rpc } from '../server/support.js';
import { waitFor } from '../helpers/wait.js';
import {
  callAsTask,
  startInProcess,
  textOf,
  waitForTask,
  type RunningProxyServer,
} from './support.js';

const CHATTY = fileURLToPath(new URL('./fixtures/chatty-upstream.js', import.meta.url));
const FLOOD = 300_000;
/**
 * Each notification cost the proxy ~40 µs of CPU before the gate (12 s for this flood), mostly
 * the MCP client's schema checks; now a line is parsed, counted and mostly dropped (~5 µs).
 */
const CPU_BUDGET_MS = 5000;

const BURST_WARNING = 'the upstream sends notifications faster than the proxy takes them';

describe('an upstream that floods notifications', () => {
  let proxy: RunningProxyServer;
  before(async () => {
    proxy = await startInProcess({
      upstream: { kind: 'stdio', command: process.execPath, args: [CHATTY] },
    });
  });
  after(async () => {
    await proxy.close();
  });

  for (const kind of ['unknown', 'message', 'progress']) {
    it(`costs the proxy little CPU (${FLOOD.toLocaleString('en')} ${kind} notifications)`, async () => {
      const warningsBefore = proxy.logger.lines.filter((l) => l.message === BURST_WARNING).length;
      const cpu = process.cpuUsage();
      const taskId = await callAsTask(proxy.url, 'flood', { count: FLOOD, kind });
      const task = await waitForTask(proxy.url, taskId, ['completed', 'failed'], 60_000);
      const used = process.cpuUsage(cpu);
      const cpuMs = (used.user + used.system) / 1000;
      assert.equal(task['status'], 'completed', JSON.stringify(task));
      assert.equal(textOf(task), `sent ${FLOOD}`);
      assert.ok(cpuMs < CPU_BUDGET_MS, `the flood cost ${Math.round(cpuMs)} ms of CPU`);
      const warnings = proxy.logger.lines.filter((l) => l.message === BURST_WARNING);
      // One per burst: this flood's, unless the last flood's burst was still going on.
      assert.ok(warnings.length - warningsBefore <= 1, `${warnings.length} warnings`);
      assert.ok(warnings.length >= 1, 'the burst is logged');
    });
  }

  it('keeps the latest progress of a flooded call', async () => {
    const taskId = await callAsTask(proxy.url, 'flood', {
      count: 50_000,
      kind: 'progress',
      hold: true,
    });
    const last = `step ${50_000 - 1}`;
    await waitFor(
      'the last progress as statusMessage',
      async () => {
        const reply = await rpc(proxy.url, 'tasks/get', { taskId });
        const message = reply.body.result?.['statusMessage'];
        return typeof message === 'string' && message.startsWith(last) ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    await rpc(proxy.url, 'tasks/cancel', { taskId });
    await waitForTask(proxy.url, taskId, ['cancelled']);
  });
});
