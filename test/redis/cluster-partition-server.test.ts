import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { it } from 'node:test';
import { connectRedis, OutageReporter } from '../../src/stores/redis/connect.js';
import { parseRedisUrl } from '../../src/stores/redis/url.js';
import type { LocalCluster } from '../helpers/redis-cluster.js';
import { serverCutOff, serverCutOffClusterNode } from '../partitions/link-faults.js';
import { partitionSuite } from '../partitions/suite.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A `serve --no-worker` replica cut off from a Redis Cluster (3 masters, a replica each): from
 * one master alone, then from every node. A cut-off command fails as store trouble within a
 * bound; a command to a master that froze and was failed over is not cut by that bound.
 */
partitionSuite('redis-cluster', 'Redis Cluster partitions: a server cut off', (suite) => {
  it('cut off from one master: a read of its task is answered retryable within 10 s', () =>
    serverCutOffClusterNode(suite.kit, suite.cluster, 10_000));

  it('cut off from every node: the retryable error, never a tool result; serves after', () =>
    serverCutOff(suite.kit, ['reset', 'blackhole']));

  // Last: the cluster fails a master over. Before the Cluster had any bound, a 5 s command
  // time-out refused writes to a frozen master that its promoted replica would have taken.
  it('a command to a master frozen past the failover waits for it, not for a time-out', () =>
    frozenMasterAnswers(suite.cluster));
});

async function frozenMasterAnswers(cluster: LocalCluster): Promise<void> {
  const location = parseRedisUrl(cluster.url);
  const redis = await connectRedis(location, {
    warn: () => undefined,
    outages: new OutageReporter(location, () => undefined),
  });
  try {
    const key = 'frozen-master-probe';
    await redis.set(key, 'before');
    const slot = Number(cluster.cli(cluster.ports[0] as number, 'CLUSTER', 'KEYSLOT', key));
    const { master } = cluster.ownerOf(slot);
    const slept = debugSleep(master, 8);
    await waitFor('the master to freeze', () => !answersPing(master), { timeoutMs: 5_000 });
    const frozenAt = Date.now();
    const read = await redis.get(key);
    const waitedMs = Date.now() - frozenAt;
    process.stdout.write(`# answered after ${waitedMs} ms\n`);
    assert.equal(read, 'before');
    assert.ok(waitedMs > 5_000, `answered after ${waitedMs} ms: the master did not freeze`);
    assert.equal(await slept, 0);
  } finally {
    redis.disconnect();
  }
}

/** `DEBUG SLEEP` blocks the node's one thread: to the cluster it is down until it wakes. */
function debugSleep(port: number, seconds: number): Promise<number | null> {
  const child = spawn('redis-cli', ['-p', String(port), 'DEBUG', 'SLEEP', String(seconds)]);
  return new Promise((resolve) => child.once('exit', resolve));
}

function answersPing(port: number): boolean {
  return spawnSync('redis-cli', ['-p', String(port), 'PING'], { timeout: 300 }).status === 0;
}
