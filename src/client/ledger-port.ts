import type { JsonRpcErrorObject } from '../task/errors.js';
import type { OutcomeKind } from './outcome.js';

/**
 * The ledger port: what the host client needs to remember about its tasks. `Ledger` keeps it in
 * SQLite (durable, shared between processes); `MemoryLedger` keeps it in the process (tests,
 * embedded hosts that persist elsewhere, runtimes without the native driver).
 */
export type LedgerStatus =
  'working' | 'input_required' | 'completed' | 'failed' | 'cancelled' | 'lost';

const FINAL: readonly LedgerStatus[] = ['completed', 'failed', 'cancelled', 'lost'];

export function isFinal(status: LedgerStatus): boolean {
  return FINAL.includes(status);
}

export interface LedgerEntry {
  id: string;
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  status: LedgerStatus;
  statusMessage?: string;
  pollIntervalMs: number;
  /** Epoch ms before which the next `tasks/get` must not be sent. */
  nextPollAt: number;
  ttlMs: number | null;
  inputRequests?: Record<string, unknown>;
  /** Input keys already answered through `tasks/update`: never asked again. */
  answeredKeys: string[];
  outcome?: OutcomeKind;
  result?: Record<string, unknown>;
  error?: JsonRpcErrorObject;
  outputSchema?: Record<string, unknown>;
  /** Kept so that `resume` can reattach to a server that needs auth (the file is 0600). */
  bearer?: string;
  /** The process currently waiting on the task, if any. */
  ownerPid?: number;
  /**
   * The wire the task was created on, and so must be followed on: `2026-07-28` (the
   * tasks extension; also what an entry without the field means) or `2025-11-25` (a session's
   * `tasks/get` and `tasks/result`).
   */
  protocolVersion?: string;
  createdAt: number;
  updatedAt: number;
}

export interface Observation {
  status: LedgerStatus;
  statusMessage?: string;
  pollIntervalMs: number;
  nextPollAt: number;
  ttlMs?: number | null;
  inputRequests?: Record<string, unknown>;
}

export interface Settlement {
  status: LedgerStatus;
  outcome: OutcomeKind;
  statusMessage?: string;
  result?: Record<string, unknown>;
  error?: JsonRpcErrorObject;
}

/**
 * A `tools/call` sent with an idempotency key whose reply has not arrived yet. If the process
 * dies before it does, `TaskrailClient.resume()` sends it again with the same key and gets the
 * task the first attempt made.
 */
export interface PendingCall {
  key: string;
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  bearer?: string;
  createdAt: number;
}

export interface TaskLedger {
  readonly path: string;
  /** Records a new task; a second record of the same id (a retried create) keeps the first. */
  record(entry: Omit<LedgerEntry, 'createdAt' | 'updatedAt' | 'answeredKeys'>): LedgerEntry;
  get(id: string): LedgerEntry | undefined;
  require(id: string): LedgerEntry;
  /** Newest first. */
  list(): LedgerEntry[];
  /** Oldest first. */
  unfinished(): LedgerEntry[];
  /** Stores what the last `tasks/get` said. A final entry never changes again. */
  observe(id: string, observation: Observation): void;
  settle(id: string, settlement: Settlement): void;
  markAnswered(id: string, keys: readonly string[]): void;
  setOwner(id: string, pid: number | undefined): void;
  /** Written before a keyed `tools/call` is sent; a second write of the same key keeps the first. */
  recordPending(call: Omit<PendingCall, 'createdAt'>): void;
  /** The reply arrived (a task, a direct answer, a refusal): nothing is left to re-send. */
  dropPending(key: string): void;
  /** Oldest first. */
  pending(server: string): PendingCall[];
  close(): void;
}

export class MemoryLedger implements TaskLedger {
  readonly path = ':memory:';
  readonly #entries = new Map<string, LedgerEntry>();
  readonly #pending = new Map<string, PendingCall>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  record(entry: Omit<LedgerEntry, 'createdAt' | 'updatedAt' | 'answeredKeys'>): LedgerEntry {
    if (!this.#entries.has(entry.id)) {
      const now = this.#now();
      this.#entries.set(
        entry.id,
        structuredClone({ ...entry, answeredKeys: [], createdAt: now, updatedAt: now }),
      );
    }
    return this.require(entry.id);
  }

  get(id: string): LedgerEntry | undefined {
    const entry = this.#entries.get(id);
    return entry === undefined ? undefined : structuredClone(entry);
  }

  require(id: string): LedgerEntry {
    const entry = this.get(id);
    if (entry === undefined) throw new Error(`no task '${id}' in the ledger`);
    return entry;
  }

  list(): LedgerEntry[] {
    return [...this.#entries.values()]
      .sort((a, b) => b.createdAt - a.createdAt)
      .map((e) => structuredClone(e));
  }

  unfinished(): LedgerEntry[] {
    return this.list()
      .reverse()
      .filter((e) => !isFinal(e.status));
  }

  observe(id: string, o: Observation): void {
    this.#patch(id, true, (e) => {
      const { statusMessage, inputRequests, ttlMs, ...rest } = o;
      Object.assign(e, rest);
      if (ttlMs !== undefined && ttlMs !== null) e.ttlMs = ttlMs;
      setOptional(e, 'statusMessage', statusMessage);
      setOptional(e, 'inputRequests', inputRequests);
    });
  }

  settle(id: string, s: Settlement): void {
    this.#patch(id, true, (e) => {
      e.status = s.status;
      e.outcome = s.outcome;
      setOptional(e, 'statusMessage', s.statusMessage);
      setOptional(e, 'result', s.result);
      setOptional(e, 'error', s.error);
      delete e.inputRequests;
      delete e.ownerPid;
    });
  }

  markAnswered(id: string, keys: readonly string[]): void {
    this.#patch(id, false, (e) => (e.answeredKeys = [...new Set([...e.answeredKeys, ...keys])]));
  }

  setOwner(id: string, pid: number | undefined): void {
    const e = this.#entries.get(id);
    if (e !== undefined) setOptional(e, 'ownerPid', pid);
  }

  recordPending(call: Omit<PendingCall, 'createdAt'>): void {
    if (!this.#pending.has(call.key)) {
      this.#pending.set(call.key, structuredClone({ ...call, createdAt: this.#now() }));
    }
  }

  dropPending(key: string): void {
    this.#pending.delete(key);
  }

  pending(server: string): PendingCall[] {
    return [...this.#pending.values()]
      .filter((call) => call.server === server)
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((call) => structuredClone(call));
  }

  close(): void {}

  #patch(id: string, onlyOpen: boolean, change: (entry: LedgerEntry) => void): void {
    const e = this.#entries.get(id);
    if (e === undefined || (onlyOpen && isFinal(e.status))) return;
    change(e);
    e.updatedAt = this.#now();
  }
}

function setOptional<K extends keyof LedgerEntry>(
  entry: LedgerEntry,
  key: K,
  value: LedgerEntry[K] | undefined,
): void {
  if (value === undefined) delete entry[key];
  else entry[key] = value;
}
