export { taskStoreContract } from './store-contract/index.js';
export type {
  StoreContractOptions,
  StoreFactory,
  StoreFactoryContext,
  StoreFixture,
} from './store-contract/index.js';
export { createFakeClock, type FakeClock } from './support/fake-clock.js';
export { waitFor } from './support/wait.js';
