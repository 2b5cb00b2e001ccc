import {
  MemoryLedger,
  TaskrailClient,
  isFinal,
  type DetailedTask,
  type Ledger,
  type LedgerEntry,
} from '../client/index.js';
import { bearerFrom } from './options.js';
import { formatAge, showJson } from './tasks-format.js';

/** How long `tasks list` waits for servers' live answers before showing the ledger's view. */
const LIVE_TIMEOUT_MS = 2000;

interface Row {
  entry: LedgerEntry;
  status: string;
  statusMessage: string | undefined;
  /** False when the status is the ledger's last record (server unreachable or unknown). */
  live: boolean;
}

/**
 * `tasks list`: the ledger's tasks with the status their servers report now, when they answer
 * within two seconds (the ledger keeps the status it last saw, so a task parked since shows
 * `working` there). Text: a header line, then one line per task starting with its full id.
 */
export async function listTasks(ledger: Ledger, json: boolean): Promise<number> {
  const entries = ledger.list();
  const rows = await withLiveStatus(entries);
  if (json) {
    const records = rows.map((row) => ({
      ...showJson(row.entry),
      status: row.status,
      statusMessage: row.statusMessage ?? null,
      live: row.live,
    }));
    process.stdout.write(`${JSON.stringify(records)}\n`);
    return 0;
  }
  process.stdout.write('ID  SERVER  TOOL  STATUS  AGE  MESSAGE\n');
  const now = Date.now();
  for (const { entry, status, statusMessage, live } of rows) {
    const message = (statusMessage ?? '').replace(/\s+/g, ' ');
    const shown = live ? status : `${status}?`;
    const line = `${entry.id}  ${entry.server}  ${entry.tool}  ${shown}  ${formatAge(now - entry.createdAt)}  ${message}`;
    process.stdout.write(`${line.trimEnd()}\n`);
  }
  return 0;
}

async function withLiveStatus(entries: LedgerEntry[]): Promise<Row[]> {
  const signal = AbortSignal.timeout(LIVE_TIMEOUT_MS);
  const clients = new Map<string, TaskrailClient>();
  try {
    return await Promise.all(
      entries.map(async (entry): Promise<Row> => {
        const ledgerRow = {
          entry,
          status: entry.status,
          statusMessage: entry.statusMessage,
          live: isFinal(entry.status),
        };
        if (isFinal(entry.status)) return ledgerRow;
        const task = await fetchLive(clientFor(clients, entry), entry.id, signal);
        if (task === undefined) return ledgerRow;
        return { entry, status: task.status, statusMessage: task.statusMessage, live: true };
      }),
    );
  } finally {
    for (const client of clients.values()) client.close();
  }
}

async function fetchLive(
  client: TaskrailClient,
  id: string,
  signal: AbortSignal,
): Promise<DetailedTask | undefined> {
  try {
    return await client.fetchTask(id, signal);
  } catch {
    return undefined;
  }
}

/** One read-only client per server and credential; the ledger is never written by `list`. */
function clientFor(clients: Map<string, TaskrailClient>, entry: LedgerEntry): TaskrailClient {
  // A fresh token from the environment beats the one saved with the call (OAuth tokens expire).
  const bearer = bearerFrom(undefined) ?? entry.bearer;
  const key = `${entry.server}\n${bearer ?? ''}`;
  let client = clients.get(key);
  if (client === undefined) {
    client = new TaskrailClient({
      url: entry.server,
      ledger: new MemoryLedger(),
      push: false,
      ...(bearer === undefined ? {} : { bearer }),
    });
    clients.set(key, client);
  }
  return client;
}
