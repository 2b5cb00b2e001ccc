/**
 * The raw BullMQ side of bench/redis-lifecycle.ts: a worker process with nothing of taskrail,
 * running a no-op processor. `node lib/bullmq-worker.js REDIS_URL PREFIX CONCURRENCY`; prints
 * `ready` once connected, stops on SIGTERM.
 */
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';

const [url, prefix, concurrency] = process.argv.slice(2);
if (url === undefined || prefix === undefined || concurrency === undefined) {
  throw new Error('usage: lib/bullmq-worker.js REDIS_URL PREFIX CONCURRENCY');
}
const worker = new Worker('tasks', async () => ({ content: [] }), {
  connection: new Redis(url, { maxRetriesPerRequest: null }),
  prefix,
  concurrency: Number(concurrency),
});
worker.on('error', (error) => process.stderr.write(`bullmq worker: ${error.message}\n`));
await worker.waitUntilReady();
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  void worker.close().then(() => process.exit(0));
});
