import { TaskrailClient, type TaskrailClientOptions } from './host-client.js';
import { Ledger, type LedgerEntry, type TaskLedger } from './ledger.js';
import type { ToolCall } from './tool-call.js';

export interface ResumeOptions extends Omit<TaskrailClientOptions, 'url' | 'bearer' | 'ledger'> {
  ledger?: TaskLedger;
  /** Sent instead of the token each task was created with (a fresh one: OAuth tokens expire). */
  bearer?: string | undefined;
  /** Also take tasks that a live process (e.g. a running `taskrail call`) is still watching. */
  all?: boolean;
}

export type ResumedTask =
  | { entry: LedgerEntry; call: ToolCall; error?: undefined }
  | { entry: LedgerEntry; call?: undefined; error: Error };

export interface Resumption {
  tasks: ResumedTask[];
  /** Closes the clients (and the ledger when this call opened it). */
  close(): void;
}

/**
 * Reattaches to every unfinished task in the ledger, whatever server it lives on, with the
 * bearer token it was created with. A server that cannot be reached yields an `error` entry.
 */
export async function resumeLedger(options: ResumeOptions = {}): Promise<Resumption> {
  const ledger = options.ledger ?? Ledger.open(options.home);
  const entries = ledger
    .unfinished()
    .filter((entry) => options.all === true || !watchedElsewhere(entry));
  const clients = new Map<string, TaskrailClient>();
  const tasks = await Promise.all(
    entries.map(async (entry): Promise<ResumedTask> => {
      const bearer = options.bearer ?? entry.bearer;
      const key = `${entry.server}\u0000${bearer ?? ''}`;
      let client = clients.get(key);
      if (client === undefined) {
        const { all: _all, ...rest } = options;
        client = new TaskrailClient({ ...rest, url: entry.server, ledger, bearer });
        clients.set(key, client);
      }
      try {
        return { entry, call: await client.attach(entry.id, { background: true }) };
      } catch (error) {
        return { entry, error: error instanceof Error ? error : new Error(String(error)) };
      }
    }),
  );
  return {
    tasks,
    close: () => {
      for (const client of clients.values()) client.close();
      if (options.ledger === undefined) ledger.close();
    },
  };
}

/** True when another live process records itself as the task's watcher. */
export function watchedElsewhere(entry: LedgerEntry): boolean {
  const pid = entry.ownerPid;
  if (pid === undefined || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
