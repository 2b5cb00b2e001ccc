export {
  GraphileExecutor,
  createGraphileExecutor,
  TASK_IDENTIFIER,
  type GraphileExecutorOptions,
} from './graphile-executor.js';
export { joinPostgresFleet } from './fleet.js';
