/**
 * The shapes of a chaos task and its end, shared by chaos/expect.ts, chaos/policy-expect.ts and
 * chaos/wakeup-expect.ts (here, so none of them imports another).
 */
export type PolicyKind = 'flaky' | 'slow' | 'oncep' | 'nap' | 'keyed';

/** The wake-up phases' tasks (chaos/wakeup-expect.ts). */
export type WakeKind = 'doze' | 'fade' | 'oncenap' | 'backoff';

/** What each chaos task must end as, from its tool and arguments alone. */
export type Kind = 'short' | 'long' | 'ask' | 'fail' | 'cancel' | 'once' | PolicyKind | WakeKind;

export interface Spec {
  n: number;
  kind: Kind;
  ms: number;
  /** How long after creation the client cancels (a `cancel`, a `doze`); cancelled is then right. */
  cancelAfterMs?: number;
  /** The task outlives its ttl unwatched (a `fade`): gone from the store is its right end. */
  expires?: boolean;
  /** More arguments: a policy task's schedule of failures (chaos/policy-expect.ts). */
  args?: Record<string, number>;
}

/** A final state as the store (or a client) saw it. */
export interface Final {
  status: string;
  text?: string;
  error?: string;
}
