import { describe } from 'node:test';
import { registerBasicCases } from './basics.js';
import { registerCompareAndSetCases } from './compare-and-set.js';
import { registerCreateLeaseCases } from './create-lease.js';
import { registerEventCases } from './events.js';
import { registerExpiryCases } from './expiry.js';
import { registerFairShareCases } from './fair-share.js';
import { registerFencingCases } from './fencing.js';
import { caseDefiner, type StoreContractOptions, type StoreFactory } from './harness.js';
import { registerIdempotencyCases } from './idempotency.js';
import { registerLeaseCases } from './leases.js';
import { registerListCases } from './list.js';
import { registerPermitCases } from './permits.js';
import { registerQueueCapCases } from './queue-cap.js';
import { registerFoldedPermitCases } from './permits-folded.js';
import { registerSpareExpiredCases } from './spare-expired.js';
import { registerStepCases } from './steps.js';
import { registerTextCases } from './texts.js';
import { registerTakeoverCases } from './takeover.js';
import { registerWaitCases } from './waits.js';

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
  // node:test's describe returns a promise the runner itself awaits.
  void describe(`TaskStore contract: ${name}`, () => {
    void describe('create and get', () => registerBasicCases(define));
    void describe('idempotency keys', () => registerIdempotencyCases(define));
    void describe('compareAndSet', () => registerCompareAndSetCases(define));
    void describe('expiry and sweeping', () => registerExpiryCases(define));
    void describe('leases', () => registerLeaseCases(define));
    void describe('leases taken at creation', () => registerCreateLeaseCases(define));
    void describe('leases of gone holders', () => registerTakeoverCases(define));
    void describe('expired leases spared after an outage', () => registerSpareExpiredCases(define));
    void describe('durable waits', () => registerWaitCases(define));
    void describe('concurrency permits', () => registerPermitCases(define));
    void describe('permits in lease writes', () => registerFoldedPermitCases(define));
    void describe('fenced writes', () => registerFencingCases(define));
    void describe('steps', () => registerStepCases(define));
    void describe('texts', () => registerTextCases(define));
    void describe('list', () => registerListCases(define));
    void describe('events', () => registerEventCases(define));
    void describe('fair share', () => registerFairShareCases(define));
    void describe('the per-principal cap', () => registerQueueCapCases(define));
  });
}
