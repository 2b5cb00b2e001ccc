import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fleetMismatches, type FleetMember } from '../../src/executors/bullmq/fleet.js';
import type { Child } from '../helpers/child.js';
import { startServing, startWorker } from '../helpers/taskrail.js';
import { waitFor } from '../helpers/wait.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from './redis-env.js';

const member = (tools: string[], version = '1.0.0'): FleetMember => ({
  role: 'worker',
  version,
  tools,
  host: 'h',
  pid: 1,
  seenAt: 0,
});

describe('fleet mismatches (pure)', () => {
  it('finds none between members with the same version and tools', () => {
    assert.deepEqual(fleetMismatches(member(['a:optional']), [member(['a:optional'])]), []);
  });

  it('names the tools on each side and a version difference', () => {
    const [tools, version] = [
      fleetMismatches(member(['a:optional', 'b:required']), [member(['a:optional', 'c:optional'])]),
      fleetMismatches(member(['a:optional']), [member(['a:optional'], '0.9.0')]),
    ];
    assert.equal(tools.length, 1);
    assert.match(tools[0] as string, /only here: b:required; only there: c:optional/);
    assert.match(version[0] as string, /runs taskrail 0\.9\.0/);
  });
});

if (!skipWithoutRedis('fleet check across processes')) {
  describe('fleet check across processes', () => {
    it('warns at start-up when a worker serves other tools than a replica', async () => {
      const prefix = uniquePrefix();
      const url = urlWithPrefix(prefix);
      const children: Child[] = [];
      try {
        const serving = await startServing(
          ['serve', '--no-worker', '--port', '0', '--store', url],
          {
            timeoutMs: 20_000,
          },
        );
        const replica = serving.child;
        children.push(replica);
        const worker = await startWorker(
          ['--store', url, '--tools', '.build/examples/custom-tools.js'],
          { timeoutMs: 20_000 },
        );
        children.push(worker);
        const warning = await waitFor('a fleet warning', () =>
          worker
            .stderr()
            .split('\n')
            .find((line) => line.includes('fleet mismatch')),
        );
        assert.match(warning, /only here: count_words:optional/);
        assert.match(warning, /only there: .*slow_compute:optional/);
        assert.doesNotMatch(replica.stderr(), /fleet mismatch/);
      } finally {
        for (const child of children) await child.kill('SIGTERM');
        await deletePrefix(prefix);
      }
    });
  });
}
