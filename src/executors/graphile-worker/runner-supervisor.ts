import type { Runner } from 'graphile-worker';
import { setTimeout as sleep } from 'node:timers/promises';
import { backoffDelayMs, type Backoff } from '../../task/backoff.js';

/** The exit code graphile-worker sets when it shuts down on a breaking-migration notice. */
const MIGRATION_EXIT_CODE = 57;
const RELAUNCH: Backoff = { backoffMs: 50, maxBackoffMs: 2000 };

/**
 * Keeps one graphile-worker runner taking jobs for as long as the executor runs.
 *
 * graphile-worker stops a runner by itself when a process announces a breaking migration of
 * ANY graphile-worker schema in the same database: its `worker:migrate` NOTIFY does not say
 * which schema. So the first start of another taskrail deployment (or test) on another schema
 * of the database silently stopped every worker here, while the process lived on: due tasks
 * then waited forever, the recovery scans adding jobs nobody took. A runner that stops without
 * being asked is replaced at once. The new one checks this schema's own migrations as it
 * starts, and refuses (the warning says why, and it is retried) only if a newer graphile-worker
 * really migrated it.
 */
export class RunnerSupervisor {
  readonly #launch: () => Promise<Runner>;
  readonly #warn: (message: string, error: unknown) => void;
  #current: Promise<Runner | undefined>;
  /** Runners that stopped by themselves; their jobs in flight still finish. */
  readonly #retired: Promise<unknown>[] = [];
  #stopping = false;
  /** The exit code before graphile-worker's first shutdown notice set it (one per process). */
  #exitCodeBeforeNotice = process.exitCode;

  /** Starts the first runner; `started` rejects when it cannot start. */
  constructor(launch: () => Promise<Runner>, warn: (message: string, error: unknown) => void) {
    this.#launch = launch;
    this.#warn = warn;
    this.#current = launch().then((runner) => this.#watch(runner));
  }

  /** Resolves once the current runner is started (the first one: rejects if it could not). */
  async started(): Promise<void> {
    await this.#current;
  }

  /** Stops the current runner and waits for every runner's jobs in flight. */
  async stop(): Promise<void> {
    this.#stopping = true;
    const runner = await this.#current.catch(() => undefined);
    await Promise.allSettled([runner?.stop(), ...this.#retired]);
  }

  #watch(runner: Runner): Runner {
    let replaced = false;
    // Emitted before graphile-worker acts on the notice (and sets process.exitCode).
    runner.events.on('pool:listen:notification', ({ message }) => {
      if (message.channel === 'worker:migrate' && process.exitCode !== MIGRATION_EXIT_CODE) {
        this.#exitCodeBeforeNotice = process.exitCode;
      }
    });
    const replace = (why: string) => {
      if (this.#stopping || replaced) return;
      replaced = true;
      this.#retired.push(runner.promise.catch(() => undefined));
      this.#warn('graphile-worker stopped taking jobs by itself; starting it again', why);
      this.#current = this.#relaunch().then((next) => {
        // Not our schema's migration (the new runner accepted it): not a reason to exit 57.
        if (next !== undefined && process.exitCode === MIGRATION_EXIT_CODE) {
          process.exitCode = this.#exitCodeBeforeNotice;
        }
        return next;
      });
    };
    runner.events.on('pool:gracefulShutdown', ({ message }) => replace(message));
    // Also catches a shutdown that began before these listeners were attached.
    runner.promise.then(
      () => replace('its runner exited'),
      (error: unknown) => replace(error instanceof Error ? error.message : String(error)),
    );
    return runner;
  }

  /** Starts a runner again and again (backing off) until one runs or the executor stops. */
  async #relaunch(): Promise<Runner | undefined> {
    for (let attempt = 0; !this.#stopping; attempt++) {
      try {
        const runner = await this.#launch();
        if (!this.#stopping) return this.#watch(runner);
        await runner.stop().catch(() => undefined);
        return undefined;
      } catch (error) {
        if (attempt === 0) this.#warn('graphile-worker could not start again; retrying', error);
      }
      await sleep(backoffDelayMs(RELAUNCH, attempt + 1));
    }
    return undefined;
  }
}
