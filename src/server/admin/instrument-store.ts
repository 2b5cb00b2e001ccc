import type { CreateOutcome, TaskStore } from '../../store/port.js';
import { TaskrailError } from '../../task/errors.js';

/** What the metrics learn from store calls that emit no events. */
export interface StoreProbe {
  storeError(operation: string): void;
  leaseClaimed(): void;
  leaseRenewed(held: boolean): void;
}

type AnyMethod = (...args: unknown[]) => unknown;

/**
 * Wraps a store so failed calls, lease claims and lease renewals (heartbeats) are counted.
 * Methods run bound to the real store: adapters keep their state in private fields, which a
 * Proxy receiver could not reach.
 */
export function instrumentStore(store: TaskStore, probe: StoreProbe): TaskStore {
  const wrapped = new Map<PropertyKey, AnyMethod>();
  return new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      let method = wrapped.get(property);
      if (method === undefined) {
        method = wrap(String(property), (value as AnyMethod).bind(target), probe);
        wrapped.set(property, method);
      }
      return method;
    },
  });
}

function wrap(operation: string, call: AnyMethod, probe: StoreProbe): AnyMethod {
  return (...args) => {
    const outcome = call(...args);
    if (!(outcome instanceof Promise)) return outcome;
    return outcome.then(
      (value: unknown) => {
        observe(operation, value, probe);
        return value;
      },
      (error: unknown) => {
        // A caller's mistake the store refused (a forged list cursor) is not a store failure.
        if (!(error instanceof TaskrailError && error.code === 'INVALID_ARGUMENT')) {
          probe.storeError(operation);
        }
        throw error;
      },
    );
  };
}

function observe(operation: string, value: unknown, probe: StoreProbe): void {
  if (operation === 'claim' && value !== undefined) probe.leaseClaimed();
  else if (operation === 'create' && (value as CreateOutcome).lease !== undefined) {
    probe.leaseClaimed();
  } else if (operation === 'renewLease') probe.leaseRenewed((value as { held: boolean }).held);
}
