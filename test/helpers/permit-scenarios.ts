/**
 * The concurrency-permit scenarios every store passes with real processes: two runner
 * processes on one store, tools whose runs write start and end to the journal. Overlap is
 * computed from the tools' own timestamps; a killed runner's run counts as running until the
 * kill.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { it } from 'node:test';
import { isTerminal } from '../../src/task/status.js';
import { parseJournal, POLICY, type JournalEntry } from '../fixtures/policy-tools.js';
import type { Child } from './child.js';
import type { PolicyHarness } from './run-policy-scenarios.js';
import { waitFor } from './wait.js';

/** The most runs of `prefix` (`<prefix>-start` … `<prefix>-end`) in progress at once. */
export function maxOverlap(entries: readonly JournalEntry[], prefix: string, endOf = Infinity) {
  const edges: { at: number; step: number }[] = [];
  const started = new Map<string, number>();
  for (const entry of entries) {
    if (entry.event === `${prefix}-start`) started.set(`${entry.taskId}/${entry.pid}`, entry.at);
    if (entry.event === `${prefix}-end`) {
      const at = started.get(`${entry.taskId}/${entry.pid}`);
      started.delete(`${entry.taskId}/${entry.pid}`);
      if (at !== undefined) edges.push({ at, step: 1 }, { at: entry.at, step: -1 });
    }
  }
  for (const at of started.values()) edges.push({ at, step: 1 }, { at: endOf, step: -1 });
  // An end and a start at the same millisecond: the end first (the permit was given back).
  edges.sort((a, b) => a.at - b.at || a.step - b.step);
  let running = 0;
  let most = 0;
  for (const edge of edges) most = Math.max(most, (running += edge.step));
  return most;
}

export function registerPermitScenarios(h: () => PolicyHarness): void {
  const runners: Child[] = [];
  const events = (): JournalEntry[] =>
    parseJournal(existsSync(h().journal) ? readFileSync(h().journal, 'utf8') : '');
  const mine = (id: string) => events().filter((e) => e.taskId === id);
  const startRunners = async (slots: number) => {
    for (const runner of runners.splice(0)) await runner.kill('SIGTERM');
    runners.push(await h().startRunner(slots), await h().startRunner(slots));
  };
  const ended = (id: string) =>
    waitFor(
      `task ${id} to end`,
      async () => {
        const task = await h().get(id);
        return task !== undefined && isTerminal(task.status) ? task : undefined;
      },
      { timeoutMs: h().pickupMs },
    );
  const started = (id: string, event: string) =>
    waitFor(`${event} of ${id}`, () => mine(id).find((e) => e.event === event), {
      timeoutMs: h().pickupMs,
    });

  it('two runners: a key never runs more than its limit at once while other keys run', async () => {
    await startRunners(3);
    const busy: string[] = [];
    const other: string[] = [];
    for (let i = 0; i < 6; i++) busy.push(await h().create('render', { account: 'a7', ms: 500 }));
    for (let i = 0; i < 2; i++) other.push(await h().create('render', { account: 'b2', ms: 500 }));
    for (const id of [...busy, ...other]) assert.equal((await ended(id)).status, 'completed');
    const journal = events().filter((e) => [...busy, ...other].includes(e.taskId));
    const a7 = journal.filter((e) => e.event.endsWith(':a7'));
    const b2 = journal.filter((e) => e.event.endsWith(':b2'));
    const renders = (list: JournalEntry[]) =>
      list.map((e) => ({ ...e, event: e.event.replace(/:.*$/, '') }));
    const all = renders(journal);
    process.stdout.write(
      `# render overlap: a7 ${maxOverlap(renders(a7), 'render')}, b2 ` +
        `${maxOverlap(renders(b2), 'render')}, both ${maxOverlap(all, 'render')}\n`,
    );
    assert.equal(
      maxOverlap(renders(a7), 'render'),
      POLICY.renderLimit,
      'key a7: its limit at most',
    );
    assert.ok(maxOverlap(renders(b2), 'render') <= POLICY.renderLimit, 'key b2 over its limit');
    assert.ok(maxOverlap(all, 'render') > POLICY.renderLimit, 'the other key ran meanwhile');
    for (const id of [...busy, ...other]) {
      assert.equal(mine(id).filter((e) => e.event.startsWith('render-start')).length, 1);
    }
  });

  it('a waiting task says so and holds no slot: another tool runs meanwhile', async () => {
    await startRunners(1);
    const holder = await h().create('solo', { ms: 4000 });
    await started(holder, 'solo-start');
    const waiter = await h().create('solo', { ms: 100 });
    const waiting = await waitFor(
      `task ${waiter} to wait for a permit`,
      async () => {
        const task = await h().get(waiter);
        if (task?.statusMessage !== 'waiting for a concurrency slot: key solo (limit 1)') return;
        return (await h().leased()).includes(waiter) ? undefined : task;
      },
      { timeoutMs: h().pickupMs },
    );
    assert.equal(waiting.status, 'working');
    const quick = await h().create('quick_note');
    assert.equal((await ended(quick)).status, 'completed');
    assert.ok(!mine(holder).some((e) => e.event === 'solo-end'), 'it ran while the holder ran');
    const done = await ended(waiter);
    assert.equal(done.status, 'completed');
    assert.equal(done.statusMessage, undefined, 'the waiting message went when it started');
    const holderEnd = mine(holder).find((e) => e.event === 'solo-end');
    const waiterStart = mine(waiter).find((e) => e.event === 'solo-start');
    assert.ok(holderEnd && waiterStart && waiterStart.at >= holderEnd.at);
    process.stdout.write(
      `# permit released → waiter started: ${waiterStart.at - holderEnd.at} ms\n`,
    );
  });

  it("a kill -9 holder's permit comes back when its lease runs out; the waiter runs", async () => {
    await startRunners(1);
    const holder = await h().create('solo', { ms: 120_000 });
    const start = await started(holder, 'solo-start');
    const waiter = await h().create('solo', { ms: 100 });
    await waitFor(
      `task ${waiter} to wait`,
      async () =>
        /^waiting for a concurrency slot/.test((await h().get(waiter))?.statusMessage ?? ''),
      { timeoutMs: h().pickupMs },
    );
    const victim = runners.find((runner) => runner.process.pid === start.pid);
    assert.ok(victim, 'the holder runs in one of the runners');
    await victim.kill('SIGKILL');
    const killedAt = Date.now();
    runners.splice(runners.indexOf(victim), 1, await h().startRunner(1));
    assert.equal((await ended(waiter)).status, 'completed');
    const ran = mine(waiter).find((e) => e.event === 'solo-start');
    assert.ok(ran && ran.at >= killedAt, 'the waiter started only after the holder died');
    assert.ok(maxOverlap(events(), 'solo', killedAt) <= 1);
    process.stdout.write(`# waiter started ${ran.at - killedAt} ms after the kill -9\n`);
  });

  it('(stops the permit runners)', async () => {
    for (const runner of runners.splice(0)) await runner.kill('SIGTERM');
  });
}
