/**
 * The shapes of a chaos task and its end, shared by chaos/expect.ts and chaos/policy-expect.ts
 * (here, so neither of them imports the other).
 */
export type PolicyKind = 'flaky' | 'slow' | 'oncep' | 'nap' | 'keyed';

/** What each chaos task must end as, from its tool and arguments alone. */
export type Kind = 'short' | 'long' | 'ask' | 'fail' | 'cancel' | 'once' | PolicyKind;

export interface Spec {
  n: number;
  kind: Kind;
  ms: number;
  /** For `cancel`: how long after creation the client cancels. */
  cancelAfterMs?: number;
  /** More arguments: a policy task's schedule of failures (chaos/policy-expect.ts). */
  args?: Record<string, number>;
}

/** A final state as the store (or a client) saw it. */
export interface Final {
  status: string;
  text?: string;
  error?: string;
}
