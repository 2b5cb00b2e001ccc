import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Child } from '../helpers/child.js';
import { startServing, startWorker } from '../helpers/taskrail.js';
import { hasRedisServer, startOwnRedis, type OwnRedis } from '../helpers/own-redis.js';
import { waitFor } from '../helpers/wait.js';
import { tempDir } from '../stores/temp-dir.js';

const skip = hasRedisServer() ? false : 'redis-server is not installed';
if (skip !== false) process.stdout.write(`# skipping serve --no-worker watch: ${skip}\n`);

const NO_WORKER = /no taskrail worker is alive/;

/** `serve --no-worker` against our own redis-server: says when nothing runs its tasks. */
describe('serve --no-worker watches for live workers', { skip }, () => {
  const dir = tempDir('taskrail-noworker-');
  const children: Child[] = [];
  let redis: OwnRedis;
  let store: string;
  let serve: Child;
  let metricsUrl: string;

  const gauge = async (): Promise<string | undefined> => {
    const res = await fetch(metricsUrl, { headers: { authorization: 'Bearer adm-secret' } });
    const text = await res.text();
    return /^taskrail_workers_alive (\d+)$/m.exec(text)?.[1];
  };

  before(async () => {
    redis = await startOwnRedis();
    store = `${redis.url}?prefix=nw`;
    const tokens = join(dir.path, 'admin.json');
    writeFileSync(tokens, JSON.stringify({ 'adm-secret': 'ops' }));
    const serving = await startServing(
      ['serve', '--no-worker', '--port', '0', '--store', store, '--admin', `tokens:${tokens}`],
      { timeoutMs: 20_000 },
    );
    serve = serving.child;
    children.push(serve);
    metricsUrl = serving.url.replace(/\/mcp$/, '/metrics');
  });
  after(async () => {
    for (const child of children) await child.kill('SIGKILL');
    await redis.remove();
    dir.remove();
  });

  it('warns once and shows taskrail_workers_alive 0 while no worker is alive, then 1', async () => {
    await waitFor('the no-worker warning', () => NO_WORKER.test(serve.stderr()), {
      timeoutMs: 15_000,
    });
    assert.equal(await waitFor('the gauge', gauge), '0');
    children.push(await startWorker(['--store', store], { timeoutMs: 20_000 }));
    await waitFor('the gauge to count the worker', async () => (await gauge()) === '1', {
      timeoutMs: 15_000,
    });
    await waitFor('the recovery line', () => /worker is alive again/.test(serve.stderr()));
    assert.equal(serve.stderr().match(new RegExp(NO_WORKER, 'g'))?.length, 1, 'warned once');
  });

  it('reports a lost fleet connection in one line, without "Unhandled error event" stacks', async () => {
    await redis.stop();
    await waitFor('the fleet outage line', () => /fleet: lost the redis/.test(serve.stderr()), {
      timeoutMs: 15_000,
    });
    await redis.start();
    await waitFor(
      'the fleet recovery line',
      () => /fleet: redis connection restored/.test(serve.stderr()),
      {
        timeoutMs: 15_000,
      },
    );
    assert.doesNotMatch(serve.stderr(), /Unhandled error event/);
    assert.equal(serve.stderr().match(/fleet: lost the redis/g)?.length, 1);
    assert.equal(serve.process.exitCode, null, 'serve is still running');
  });
});
