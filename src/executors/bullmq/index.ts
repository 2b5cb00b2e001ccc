export {
  BullmqExecutor,
  createBullmqExecutor,
  QUEUE_NAME,
  type BullmqExecutorOptions,
} from './bullmq-executor.js';
export { serveExecutor, type ServeExecutorOptions } from './serve-executor.js';
export { fleetMismatches, joinFleet, type FleetMember, type FleetMembership } from './fleet.js';
