/**
 * `taskrail/executors/graphile-worker`: run tasks through graphile-worker on the database a
 * postgres store uses, so that several processes (servers and workers) share the work. Needs
 * the optional peers `pg` and `graphile-worker`. Pass the executor as `runtime.executor` to
 * `createTaskServer`.
 */
export {
  GraphileExecutor,
  createGraphileExecutor,
  TASK_IDENTIFIER,
  type GraphileExecutorOptions,
} from './graphile-executor.js';
