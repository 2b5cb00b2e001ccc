import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { waitFor } from '../helpers/wait.js';
import { rpc } from '../server/support.js';
import {
  callAsTask,
  startInProcess,
  textOf,
  waitForTask,
  type RunningProxyServer,
} from './support.js';

const UPSTREAM = resolve(new URL('./fixtures/changing-upstream.js', import.meta.url).pathname);

async function listedNames(url: string): Promise<string[]> {
  const reply = await rpc(url, 'tools/list', {});
  return ((reply.body.result?.['tools'] ?? []) as { name: string }[]).map((t) => t.name).sort();
}

/** An upstream whose tools change (SDK v1 server, list_changed) behind an in-process proxy. */
describe('tools/list follows the upstream list_changed', () => {
  let dir: string;
  let toolsFile: string;
  let proxy: RunningProxyServer;
  let session: Client;
  let listChanged = 0;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'taskrail-list-changed-'));
    toolsFile = join(dir, 'tools.json');
    writeFileSync(toolsFile, JSON.stringify(['echo']));
    process.env['TOOLS_FILE'] = toolsFile;
    proxy = await startInProcess({
      upstream: { kind: 'stdio', command: process.execPath, args: [UPSTREAM] },
      concurrency: 2,
    });
    session = new Client({ name: 'sdk-v1-session', version: '1.0.0' });
    session.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      listChanged += 1;
    });
    await session.connect(new StreamableHTTPClientTransport(new URL(proxy.url)));
  });
  after(async () => {
    await session.close();
    await proxy.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the tools the upstream lists at start', async () => {
    assert.deepEqual(await listedNames(proxy.url), ['echo']);
    const task = await callAsTask(proxy.url, 'echo', { text: 'hi' });
    assert.equal(textOf(await waitForTask(proxy.url, task, ['completed', 'failed'])), 'echo: hi');
  });

  it('adds a new tool and removes a dropped one, on both wires', async () => {
    writeFileSync(toolsFile, JSON.stringify(['shout']));
    await waitFor('the proxy to list shout without echo', async () => {
      const names = await listedNames(proxy.url);
      return names.join() === 'shout' ? names : undefined;
    });
    await waitFor('the 2025-11-25 session to hear list_changed', () =>
      listChanged > 0 ? true : undefined,
    );
    const { tools } = await session.listTools();
    assert.deepEqual(tools.map((tool) => tool.name).sort(), ['shout']);
    const task = await callAsTask(proxy.url, 'shout', { text: 'hey' });
    assert.equal(textOf(await waitForTask(proxy.url, task, ['completed', 'failed'])), 'shout: hey');
  });

  it('answers a call to a removed tool with an error that names it', async () => {
    const wire2026 = await rpc(proxy.url, 'tools/call', { name: 'echo', arguments: { text: 'x' } });
    const error2026 = wire2026.body.error?.message ?? JSON.stringify(wire2026.body.result);
    assert.match(error2026, /echo/);
    assert.match(error2026, /not found|unknown/i);
    assert.equal(wire2026.body.result?.['taskId'], undefined);
    const wire2025 = await session.callTool({ name: 'echo', arguments: { text: 'x' } }).then(
      (result) => JSON.stringify(result),
      (error: Error) => error.message,
    );
    assert.match(wire2025, /echo/);
    assert.match(wire2025, /not found|unknown/i);
  });
});
