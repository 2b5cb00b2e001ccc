import { InvalidArgumentError } from 'commander';
import {
  MemoryLedger,
  TaskrailClient,
  isFinal,
  type DetailedTask,
  type Ledger,
  type LedgerEntry,
} from '../client/index.js';
import { Session2025 } from '../client/session-2025.js';
import { WIRE_2025_VERSION } from '../protocol/constants.js';
import { packageVersion } from '../client/package-version.js';
import { outcomeOfStatus, splitOutcomeList } from '../task/outcome.js';
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

/** The `--status` values: the ledger's statuses, and `tool_error` (completed, `isError`). */
const STATUS_FILTERS = [
  'working',
  'input_required',
  'completed',
  'tool_error',
  'failed',
  'cancelled',
  'lost',
] as const;

/** Parses `--status a,b`; `tool-error` is taken for `tool_error`. */
export function parseStatusFilter(value: string): Set<string> {
  const statuses = splitOutcomeList(value);
  const known: readonly string[] = STATUS_FILTERS;
  if (!statuses.every((s) => known.includes(s))) {
    throw new InvalidArgumentError(`must be ${STATUS_FILTERS.join(', ')} (comma-separated)`);
  }
  return new Set(statuses);
}

/**
 * The status as `tasks list` shows and filters it: the server's (or the ledger's), except that
 * a task that completed with an `isError` result is a `tool_error`, as on the dashboard.
 */
function shownStatus(row: Row): string {
  return outcomeOfStatus(row.status, row.entry.outcome === 'tool_error');
}

/**
 * `tasks list`: the ledger's tasks with the status their servers report now, when they answer
 * within two seconds (the ledger keeps the status it last saw, so a task parked since shows
 * `working` there). Text: a header line, then one line per task starting with its full id.
 */
export async function listTasks(
  ledger: Ledger,
  json: boolean,
  statuses?: ReadonlySet<string>,
): Promise<number> {
  const all = await withLiveStatus(ledger.list());
  const rows = statuses === undefined ? all : all.filter((row) => statuses.has(shownStatus(row)));
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
  for (const row of rows) {
    const { entry, statusMessage, live } = row;
    const message = (statusMessage ?? '').replace(/\s+/g, ' ');
    const shown = live ? shownStatus(row) : `${shownStatus(row)}?`;
    const line = `${entry.id}  ${entry.server}  ${entry.tool}  ${shown}  ${formatAge(now - entry.createdAt)}  ${message}`;
    process.stdout.write(`${line.trimEnd()}\n`);
  }
  return 0;
}

async function withLiveStatus(entries: LedgerEntry[]): Promise<Row[]> {
  const signal = AbortSignal.timeout(LIVE_TIMEOUT_MS);
  const clients = new Map<string, TaskrailClient>();
  const sessions = new Map<string, Promise<Session2025>>();
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
        const task =
          entry.protocolVersion === WIRE_2025_VERSION
            ? await fetch2025(sessionFor(sessions, entry, signal), entry.id, signal)
            : await fetchLive(clientFor(clients, entry), entry.id, signal);
        if (task === undefined) return ledgerRow;
        return { entry, status: task.status, statusMessage: task.statusMessage, live: true };
      }),
    );
  } finally {
    for (const client of clients.values()) client.close();
    const closing = [...sessions.values()].map((s) => s.then((session) => session.close()));
    await Promise.allSettled(closing);
  }
}

type LiveStatus = Pick<DetailedTask, 'status' | 'statusMessage'>;

/** A task created on the 2025-11-25 wire: its `tasks/get`, on a session of that wire. */
async function fetch2025(
  session: Promise<Session2025>,
  id: string,
  signal: AbortSignal,
): Promise<LiveStatus | undefined> {
  try {
    const reply = await (await session).request('tasks/get', { taskId: id }, { signal });
    if (reply.kind === 'error' || typeof reply.result['status'] !== 'string') return undefined;
    const message = reply.result['statusMessage'];
    return {
      status: reply.result['status'] as DetailedTask['status'],
      ...(typeof message === 'string' ? { statusMessage: message } : {}),
    };
  } catch {
    return undefined;
  }
}

function sessionFor(
  sessions: Map<string, Promise<Session2025>>,
  entry: LedgerEntry,
  signal: AbortSignal,
): Promise<Session2025> {
  const bearer = bearerFrom(undefined) ?? entry.bearer;
  const key = `${entry.server}\n${bearer ?? ''}`;
  let session = sessions.get(key);
  if (session === undefined) {
    session = Session2025.open({
      url: entry.server,
      clientInfo: { name: 'taskrail', version: packageVersion() },
      capabilities: { tasks: {} },
      signal,
      ...(bearer === undefined ? {} : { bearer }),
    });
    session.catch(() => undefined);
    sessions.set(key, session);
  }
  return session;
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
