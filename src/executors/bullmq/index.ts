export {
  BullmqExecutor,
  createBullmqExecutor,
  QUEUE_NAME,
  type BullmqExecutorOptions,
} from './bullmq-executor.js';
