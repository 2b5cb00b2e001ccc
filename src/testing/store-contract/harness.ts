import { it, type TestContext } from 'node:test';
import type { TaskStore } from '../../store/port.js';
import { newTaskId } from '../../task/ids.js';
import { newTaskRecord, type NewTaskInput, type TaskRecord } from '../../task/record.js';
import type { Clock } from '../../task/time.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';

/** What a store factory gets: the clock its store must use for expiry and leases. */
export interface StoreFactoryContext {
  clock: Clock;
}

/** One fresh, empty store for one test case. */
export interface StoreFixture {
  store: TaskStore;
  /**
   * Opens another store on the same data (a new connection, as another process would have).
   * The first store may still be open: races run across both. Leave it out for stores whose
   * data lives in the instance (memory); the durability and cross-instance cases then use
   * one store.
   */
  reopen?: () => Promise<TaskStore>;
  /**
   * True for a store whose events reach only the listeners of the instance that wrote (SQLite):
   * the cases that listen on a peer then skip that part.
   */
  localEvents?: boolean;
  /** Removes the data (files, keys). Stores the suite got are closed before this runs. */
  cleanup(): Promise<void>;
}

export type StoreFactory = (context: StoreFactoryContext) => Promise<StoreFixture>;

export interface StoreContractOptions {
  /** Case title → reason, for a named, reasoned skip (printed by the test runner). */
  skip?: Record<string, string>;
  /** Rounds of each race. Default 40. */
  raceRounds?: number;
}

export interface Harness {
  store: TaskStore;
  clock: FakeClock;
  /** Another store on the same data, or `store` itself when the fixture cannot reopen. */
  peer(): Promise<TaskStore>;
  /** Closes `store` and returns a new one on the same data; undefined without `reopen`. */
  reopen: (() => Promise<TaskStore>) | undefined;
  raceRounds: number;
  /** Whether a peer's listeners hear this store's writes (see `StoreFixture.localEvents`). */
  crossProcessEvents: boolean;
  /** Marks the running case skipped, with a reason; the body should return after it. */
  skip(reason: string): void;
  /** A new working task record (not stored) at the clock's current time. */
  record(overrides?: Partial<NewTaskInput>): TaskRecord;
  /** Stores a new task and returns it as stored. */
  create(overrides?: Partial<NewTaskInput>): Promise<TaskRecord>;
}

export type CaseBody = (harness: Harness) => Promise<void>;
export type DefineCase = (title: string, body: CaseBody) => void;

export function caseDefiner(factory: StoreFactory, options: StoreContractOptions): DefineCase {
  return (title, body) => {
    const reason = options.skip?.[title];
    void it(title, reason === undefined ? {} : { skip: reason }, async (context) => {
      const clock = createFakeClock();
      const fixture = await factory({ clock: clock.clock });
      const opened: TaskStore[] = [fixture.store];
      try {
        await body(harness(fixture, clock, opened, options.raceRounds ?? 40, context));
      } finally {
        for (const store of opened) await store.close();
        await fixture.cleanup();
      }
    });
  };
}

function harness(
  fixture: StoreFixture,
  clock: FakeClock,
  opened: TaskStore[],
  raceRounds: number,
  context: TestContext,
): Harness {
  let peer: TaskStore | undefined;
  const open = fixture.reopen;
  const h: Harness = {
    store: fixture.store,
    clock,
    raceRounds,
    crossProcessEvents: fixture.localEvents !== true,
    skip: (reason) => context.skip(reason),
    async peer() {
      if (open === undefined) return h.store;
      if (peer === undefined) opened.push((peer = await open()));
      return peer;
    },
    reopen:
      open === undefined
        ? undefined
        : async () => {
            opened.splice(opened.indexOf(h.store), 1);
            await h.store.close();
            const next = await open();
            opened.push(next);
            h.store = next;
            return next;
          },
    record(overrides = {}) {
      return newTaskRecord(
        {
          id: newTaskId(),
          principal: 'alice',
          tool: 'slow_compute',
          arguments: { seconds: 1 },
          ttlMs: 3_600_000,
          pollIntervalMs: 500,
          ...overrides,
        },
        clock.now(),
      );
    },
    async create(overrides = {}) {
      const outcome = await h.store.create(h.record(overrides));
      return outcome.task;
    },
  };
  return h;
}
