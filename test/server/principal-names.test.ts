/**
 * No authenticated name can be the anonymous principal or one of its scoped keys: a token (or
 * an OAuth `sub`, or a host's AuthInfo) naming `anonymous` is kept as `~anonymous`, so it
 * neither escapes the fair bounds (which split the anonymous caller per connection or session)
 * nor reads the tasks anonymous callers made.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import {
  ANONYMOUS,
  authenticatedPrincipal,
  ownAuthInfo,
  principalOfAuthInfo,
} from '../../src/server/tasks/principal.js';
import { fairKeyOf } from '../../src/server/tasks/fair-bound.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { getTask, rpc } from '../listen/support.js';
import { waitFor } from '../helpers/wait.js';
import { rawInitialize } from '../helpers/raw-session.js';

const silent = { info() {}, warn() {}, error() {} };
const TOKENS = { 'tok-x': 'anonymous', 'tok-y': 'anonymous#scope', 'tok-b': 'bob' };

async function initialize(url: string, token: string): Promise<boolean> {
  return (await rawInitialize(url, { token })).session !== null;
}

describe('authenticated names kept apart from the anonymous principal', () => {
  const servers: TaskServer[] = [];
  const start = async (options: Parameters<typeof createTaskServer>[0]) => {
    const app = createTaskServer({ logger: silent, ...options });
    app.tool('noop', { description: 'x', task: true }, () => ({
      content: [{ type: 'text', text: 'ok' }],
    }));
    servers.push(app);
    return (await app.listen(0, '127.0.0.1')).url;
  };
  after(async () => Promise.all(servers.map((app) => app.close(500))));

  it('maps reserved names one-to-one to names no anonymous key can take', () => {
    const names = [
      'anonymous',
      '~anonymous',
      '~~anonymous',
      'anonymous#x',
      'alice',
      'anonymous2',
      '~bob',
    ];
    const kept = names.map(authenticatedPrincipal);
    assert.deepEqual(kept, [
      '~anonymous',
      '~~anonymous',
      '~~~anonymous',
      '~anonymous#x',
      'alice',
      'anonymous2',
      '~bob',
    ]);
    assert.equal(new Set(kept).size, names.length, 'one-to-one');
    for (const principal of kept) {
      assert.notEqual(principal, ANONYMOUS);
      assert.ok(!principal.startsWith(`${ANONYMOUS}#`));
      assert.notEqual(fairKeyOf(principal, 'scope'), fairKeyOf(ANONYMOUS, 'scope'));
    }
    const hosts = [
      { token: 't', clientId: 'anonymous', scopes: [] },
      { token: 't', clientId: 'c', scopes: [], extra: { sub: 'anonymous' } },
    ];
    for (const preset of hosts) {
      assert.equal(principalOfAuthInfo(preset), '~anonymous', 'a host’s AuthInfo too');
      assert.equal(principalOfAuthInfo(ownAuthInfo(preset)), '~anonymous', 'read twice, kept once');
    }
  });

  it('holds a token named anonymous to its share of the sessions', async () => {
    const url = await start({
      store: new MemoryTaskStore(),
      auth: { tokens: TOKENS },
      wire2025Sessions: { maxSessions: 10, maxSessionsPerPrincipal: 100 },
    });
    assert.ok(await initialize(url, 'tok-b'));
    let opened = 0;
    for (let i = 0; i < 12; i++) if (await initialize(url, 'tok-x')) opened += 1;
    // Before: keyed as the anonymous caller, each of its sessions was a caller of its own (9 of 12).
    assert.equal(opened, 5, 'half of the ten, like any principal');
    let scoped = 0;
    for (let i = 0; i < 12; i++) if (await initialize(url, 'tok-y')) scoped += 1;
    assert.ok(scoped <= 5, `a name shaped like an anonymous key gets no more (${scoped})`);
  });

  it('gives a token named anonymous none of the anonymous callers’ tasks', async () => {
    const store = new MemoryTaskStore();
    const open = await start({ store });
    const authed = await start({ store, auth: { tokens: TOKENS } });
    const { body } = await rpc(
      open,
      'tools/call',
      { name: 'noop', arguments: {} },
      { name: 'noop' },
    );
    const taskId = String((body['result'] as Record<string, unknown>)['taskId']);
    await waitFor('the anonymous task to complete', async () =>
      (await getTask(open, taskId))['status'] === 'completed' ? true : undefined,
    );
    const asToken = await rpc(authed, 'tasks/get', { taskId }, { bearer: 'tok-x', name: taskId });
    assert.equal(
      (asToken.body['error'] as { code?: number } | undefined)?.code,
      -32602,
      'not found',
    );
    const mine = await rpc(
      authed,
      'tools/call',
      { name: 'noop', arguments: {} },
      { bearer: 'tok-x', name: 'noop' },
    );
    const ownId = String((mine.body['result'] as Record<string, unknown>)['taskId']);
    assert.equal((await store.get(ownId))?.principal, '~anonymous', 'stored under the kept name');
    assert.equal(await getTask(open, ownId), undefined, 'and anonymous callers cannot read it');
  });
});
