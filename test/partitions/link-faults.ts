/**
 * A server cut off from its store (its requests are answered with the retryable JSON-RPC
 * error, never a tool result) and a worker on a slow link (every write still lands once).
 */
import assert from 'node:assert/strict';
import type { RawDispatch, RpcReply } from '../../src/client/rpc-http.js';
import { RPC } from '../../src/task/errors.js';
import type { RelayMode } from '../helpers/tcp-relay.js';
import { waitFor } from '../helpers/wait.js';
import type { LocalCluster } from '../helpers/redis-cluster.js';
import { resultText, type PartitionKit } from './harness.js';
import type { RelayGroup } from './relay-group.js';

/** A server that cannot reach its store says so well within this (a client's patience). */
const ANSWER_WITHIN_MS = 20_000;

async function call(replica: RawDispatch, method: string, params: object): Promise<RpcReply> {
  return replica({ method, params }, { context: { requestTimeoutMs: ANSWER_WITHIN_MS } });
}

/** The reply, or the failure to get one within ANSWER_WITHIN_MS, named after `what`. */
async function replyTo(what: string, reply: Promise<RpcReply>): Promise<RpcReply> {
  try {
    return await reply;
  } catch (error) {
    throw new Error(`${what}: ${(error as Error).message}`, { cause: error });
  }
}

function assertRetryableError(reply: RpcReply, what: string): void {
  assert.equal(reply.kind, 'error', `${what} was answered ${JSON.stringify(reply)}`);
  if (reply.kind !== 'error') return;
  assert.equal(reply.error.code, RPC.INTERNAL_ERROR, `${what}: ${JSON.stringify(reply.error)}`);
  assert.equal(reply.retryable, true, `${what}: not marked retryable (HTTP 503 or data.retryable)`);
}

export async function serverCutOff(kit: PartitionKit, modes: RelayMode[]): Promise<void> {
  const relay = await kit.relay();
  const server = await kit.replicaThrough(relay);
  const existing = await kit.create('quick', {});
  assert.equal((await call(server, 'tasks/get', { taskId: existing })).kind, 'result');
  for (const mode of modes) {
    relay.setMode(mode);
    const create = `tools/call on a server cut off (${mode})`;
    const read = `tasks/get on a server cut off (${mode})`;
    const createCall = call(server, 'tools/call', { name: 'quick', arguments: {} });
    assertRetryableError(await replyTo(create, createCall), create);
    const readCall = call(server, 'tasks/get', { taskId: existing });
    assertRetryableError(await replyTo(read, readCall), read);
    relay.setMode('pass');
    await waitFor(
      `the server to answer again after the ${mode} cut`,
      async () =>
        (await call(server, 'tools/call', { name: 'quick', arguments: {} })).kind === 'result',
      { timeoutMs: ANSWER_WITHIN_MS, intervalMs: 250 },
    );
  }
  kit.assertNoUnhandledRejection();
}

/**
 * A server cut off from one Redis Cluster master alone (the cluster itself healthy, so nothing
 * fails over): a read of a task on that master is answered with the retryable error within
 * `withinMs`, and served again after the heal.
 */
export async function serverCutOffClusterNode(
  kit: PartitionKit,
  cluster: LocalCluster,
  withinMs: number,
): Promise<void> {
  const relay = (await kit.relay()) as RelayGroup;
  const server = await kit.replicaThrough(relay);
  const taskId = await kit.create('quick', {});
  assert.equal((await call(server, 'tasks/get', { taskId })).kind, 'result');
  const master = cluster.ports.find((port) => cluster.cli(port, 'KEYS', `*task:${taskId}`).trim());
  assert.ok(master !== undefined, `a master holds task ${taskId}`);
  relay.node(master).setMode('blackhole');
  const cutAt = Date.now();
  const read = `tasks/get of a task on master ${master}, cut off`;
  assertRetryableError(await replyTo(read, call(server, 'tasks/get', { taskId })), read);
  const answeredMs = Date.now() - cutAt;
  process.stdout.write(`# answered ${answeredMs} ms after the cut\n`);
  assert.ok(answeredMs <= withinMs, `answered after ${answeredMs} ms, over ${withinMs} ms`);
  relay.node(master).setMode('pass');
  await waitFor(
    'the server to read the task again after the heal',
    async () => (await call(server, 'tasks/get', { taskId })).kind === 'result',
    { timeoutMs: ANSWER_WITHIN_MS, intervalMs: 250 },
  );
  kit.assertNoUnhandledRejection();
}

export async function slowLink(kit: PartitionKit, latencyMs: number): Promise<void> {
  const relay = await kit.relay();
  relay.setMode('latency', latencyMs);
  const worker = await kit.worker(relay);
  try {
    const count = 6;
    const taskId = await kit.create('writer', { count });
    const task = await kit.settled(taskId);
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    const runs = kit.runsOf(taskId);
    assert.equal(runs.filter((line) => line.event === 'start').length, 1, 'one run');
    const steps = runs.filter((line) => line.event === 'step').map((line) => line.detail);
    assert.deepEqual(steps, ['0', '1', '2', '3', '4', '5'], 'each step ran once, in order');
    assert.equal(resultText(task), 's0,s1,s2,s3,s4,s5');
    await waitFor('the terminal write to be seen', () => kit.terminalWrites.get(taskId));
    assert.equal(kit.terminalWrites.get(taskId), 1, 'exactly one terminal write');
    kit.assertNoUnhandledRejection();
  } finally {
    await worker.kill('SIGKILL');
  }
}
