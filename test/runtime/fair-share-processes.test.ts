/**
 * Fair share with a real `taskrail serve` on SQLite, principals from
 * `--auth tokens:FILE`. Run order is read from the journal the fixture tool writes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RawDispatch } from '../../src/client/rpc-http.js';
import { parseJournal, type JournalEntry } from '../fixtures/policy-tools.js';
import { readFileSync, existsSync } from 'node:fs';
import type { Child } from '../helpers/child.js';
import { createTask, dispatchTo } from '../helpers/deployment.js';
import { startServing } from '../helpers/taskrail.js';
import { waitFor } from '../helpers/wait.js';

const TOOLS = '.build/test/fixtures/policy-tools-module.js';
const TOKENS = { 'tok-a': 'alice', 'tok-b': 'bob', 'tok-c': 'carol' };
const ADMIN_TOKEN = 'tok-admin';

/** The fair-share gauges of /metrics, and whether the text names a principal anywhere. */
async function fairMetrics(url: string) {
  const res = await fetch(new URL('/metrics', url), {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  const text = await res.text();
  const gauge = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
  return {
    principals: gauge('taskrail_fair_queue_principals_waiting'),
    maxDepth: gauge('taskrail_fair_queue_max_depth'),
    namesPrincipal: /alice|bob|carol/.test(text),
  };
}

interface Served {
  url: string;
  child: Child;
  as(token: string): RawDispatch;
}

function setup(name: string) {
  const dir = mkdtempSync(join(tmpdir(), `taskrail-fair-${name}-`));
  const journal = join(dir, 'journal.log');
  const db = `sqlite:${join(dir, 'tasks.db')}`;
  const tokens = join(dir, 'tokens.json');
  writeFileSync(tokens, JSON.stringify(TOKENS));
  const admins = join(dir, 'admins.json');
  writeFileSync(admins, JSON.stringify({ [ADMIN_TOKEN]: { name: 'ops' } }));
  const events = (): JournalEntry[] =>
    parseJournal(existsSync(journal) ? readFileSync(journal, 'utf8') : '');
  const starts = (): string[] =>
    events()
      .filter((e) => e.event === 'busy-start')
      .map((e) => e.taskId);
  const startTimes = (): Map<string, number> =>
    new Map(
      events()
        .filter((e) => e.event === 'busy-start')
        .map((e) => [e.taskId, e.at]),
    );
  const serve = async (flags: string[]): Promise<Served> => {
    const args = ['serve', '--port', '0', '--store', db, '--tools', TOOLS, '--log-level', 'warn'];
    const auth = ['--auth', `tokens:${tokens}`, '--admin', `tokens:${admins}`];
    const { url, child } = await startServing([...args, ...auth, ...flags], {
      env: { TASKRAIL_E2E_LOG: journal },
    });
    return { url, child, as: (token) => dispatchTo(url, { authorization: `Bearer ${token}` }) };
  };
  return { dir, db, starts, startTimes, serve };
}

const busy = (dispatch: RawDispatch, ms: number) => createTask(dispatch, 'busy', { ms });

describe('fair share across principals on a SQLite serve (real process)', () => {
  const env = setup('order');
  let served: Served;
  before(async () => {
    served = await env.serve(['--concurrency', '2']);
  });
  after(async () => {
    await served.child.stop(30_000);
    rmSync(env.dir, { recursive: true, force: true });
  });

  it("one principal's backlog of 80 delays another's task by at most one run per slot", async () => {
    const alice = served.as('tok-a');
    const aliceIds: string[] = [];
    for (let batch = 0; batch < 8; batch++) {
      const ids = await Promise.all(Array.from({ length: 10 }, () => busy(alice, 250)));
      aliceIds.push(...ids);
    }
    const metrics = await fairMetrics(served.url);
    assert.equal(metrics.principals, 1, 'one principal waits');
    assert.ok(metrics.maxDepth >= 20, `alice's backlog on /metrics (${metrics.maxDepth})`);
    assert.equal(metrics.namesPrincipal, false, 'no principal name in /metrics');
    const bob = await busy(served.as('tok-b'), 10);
    // Bob waits from the moment his create is answered; a run that started while the create
    // was in flight did not go ahead of him. The journal stamps each start when it happened.
    const bobQueuedAt = Date.now();
    await waitFor('bob to start', () => env.starts().includes(bob), { timeoutMs: 60_000 });
    const order = env.starts();
    const bobStartedAt = env.startTimes().get(bob) ?? Infinity;
    const ahead = [...env.startTimes()].filter(
      ([id, at]) => id !== bob && at > bobQueuedAt && at < bobStartedAt,
    );
    const unstarted = aliceIds.filter((id) => !order.includes(id)).length;
    process.stdout.write(
      `# alice runs started after bob's create and before bob's: ${ahead.length}; alice still waiting: ${unstarted}\n`,
    );
    assert.ok(unstarted >= 20, `a real backlog was waiting (${unstarted} of alice's tasks)`);
    assert.ok(ahead.length <= 2, `${ahead.length} of alice's runs went first (2 slots)`);
  });

  it('with 4 slots, a principal on more than half of them waits while another principal waits', async () => {
    await served.child.stop(30_000);
    served = await env.serve(['--concurrency', '4']);
    const alice = served.as('tok-a');
    const held = [await busy(alice, 20_000), await busy(alice, 20_000), await busy(alice, 20_000)];
    const carol = await busy(served.as('tok-c'), 1500);
    await waitFor('four to run', () => [...held, carol].every((id) => env.starts().includes(id)), {
      timeoutMs: 30_000,
    });
    const aliceFourth = await busy(alice, 10);
    const bob = await busy(served.as('tok-b'), 10);
    await waitFor('bob to start', () => env.starts().includes(bob), { timeoutMs: 30_000 });
    const order = env.starts();
    assert.ok(
      !order.includes(aliceFourth) || order.indexOf(aliceFourth) > order.indexOf(bob),
      "alice's fourth task (queued first) did not take carol's slot: alice held 3 of 4",
    );
    for (const id of held) {
      await alice({ method: 'tasks/cancel', params: { taskId: id } });
    }
  });
});
