import { describe } from 'node:test';
import { registerBasicCases } from './basics.js';
import { registerCompareAndSetCases } from './compare-and-set.js';
import { registerCreateLeaseCases } from './create-lease.js';
import { registerEventCases } from './events.js';
import { registerExpiryCases } from './expiry.js';
import { caseDefiner, type StoreContractOptions, type StoreFactory } from './harness.js';
import { registerIdempotencyCases } from './idempotency.js';
import { registerLeaseCases } from './leases.js';
import { registerListCases } from './list.js';
import { registerStepCases } from './steps.js';
import { registerTakeoverCases } from './takeover.js';

export type {
  StoreContractOptions,
  StoreFactory,
  StoreFactoryContext,
  StoreFixture,
} from './harness.js';

/**
 * Registers the `TaskStore` contract as node:test cases under `describe(name)`. `makeStore` is
 * called once per case with a fake clock the store must use; it returns a fresh, empty store
 * (e.g. a new temp file or key prefix) and a `cleanup`. Call at the top level of a test file:
 *
 * ```ts
 * taskStoreContract('my store', async ({ clock }) => {
 *   const store = await MyStore.open({ prefix: randomUUID(), clock });
 *   return { store, cleanup: () => store.dropAll() };
 * });
 * ```
 */
export function taskStoreContract(
  name: string,
  makeStore: StoreFactory,
  options: StoreContractOptions = {},
): void {
  const define = caseDefiner(makeStore, options);
  describe(`TaskStore contract: ${name}`, () => {
    describe('create and get', () => registerBasicCases(define));
    describe('idempotency keys', () => registerIdempotencyCases(define));
    describe('compareAndSet', () => registerCompareAndSetCases(define));
    describe('expiry and sweeping', () => registerExpiryCases(define));
    describe('leases', () => registerLeaseCases(define));
    describe('leases taken at creation', () => registerCreateLeaseCases(define));
    describe('leases of gone holders', () => registerTakeoverCases(define));
    describe('steps', () => registerStepCases(define));
    describe('list', () => registerListCases(define));
    describe('events', () => registerEventCases(define));
  });
}
