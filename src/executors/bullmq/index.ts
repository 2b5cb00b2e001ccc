/**
 * `taskrail/executors/bullmq`: run tasks through BullMQ on the Redis a redis store uses, so that
 * several processes (servers and workers) share the work. Needs the optional peers `ioredis`
 * and `bullmq`. Pass the executor as `runtime.executor` to `createTaskServer`.
 */
export {
  BullmqExecutor,
  createBullmqExecutor,
  QUEUE_NAME,
  type BullmqExecutorOptions,
} from './bullmq-executor.js';
