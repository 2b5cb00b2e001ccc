import { isConnectionFailure } from '../../stores/postgres/errors.js';

/**
 * Lets graphile-worker's connection failures through once per outage: during a partition every
 * job, batch and pool client would otherwise log the same lost connection. The outage ends when
 * the pool connects again. Failures that are not about the connection are always passed on.
 */
export class OutageLog {
  readonly #warn: (message: string, error: unknown) => void;
  #down = false;

  constructor(warn: (message: string, error: unknown) => void) {
    this.#warn = warn;
  }

  /** A connection of the pool was made: the database is reachable again. */
  connected(): void {
    this.#down = false;
  }

  /** `details`: more evidence of what failed (graphile-worker's log metadata). */
  warn(message: string, error: unknown, details?: unknown): void {
    if (!isConnectionTrouble(error) && !isConnectionTrouble(details)) {
      this.#warn(message, error);
      return;
    }
    if (this.#down) return;
    this.#down = true;
    this.#warn(message, error);
  }
}

/** graphile-worker passes its errors in a meta object (`fatalError`, `error`, …) or as text. */
function isConnectionTrouble(error: unknown): boolean {
  if (isConnectionFailure(error)) return true;
  if (typeof error === 'string') return CONNECTION_TEXT.test(error);
  if (typeof error !== 'object' || error === null) return false;
  return Object.values(error).some((value) => isConnectionFailure(value));
}

/** The connection failures of isConnectionFailure, as graphile-worker renders them in text. */
const CONNECTION_TEXT =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not queryable|ECONNRESET|ECONNREFUSED|ETIMEDOUT|EPIPE/;
