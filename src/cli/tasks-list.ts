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
import { connectionOf, type ConnectionFlags } from './options.js';
import { alignColumns } from './table.js';
import { formatAge, showJson } from './tasks-format.js';

/** How long `tasks list` waits for servers' live answers before showing the ledger's view. */
const LIVE_TIMEOUT_MS = 2000;

export interface Row {
  entry: LedgerEntry;
  status: string;
  statusMessage: string | undefined;
  /** False when the status is the ledger's last record (the server did not answer in time). */
  live: boolean;
  /**
   * Where the status comes from: the server's answer; the ledger because the task had ended
   * (nothing to ask), the server said it does not know the task (shown `lost`), or did not answer.
   */
  source: 'server' | 'ended' | 'not_found' | 'unreachable';
}

/** What the server said of one task: its state, that it does not know it, or nothing in time. */
type LiveAnswer =
  { kind: 'task'; task: LiveStatus } | { kind: 'not_found' } | { kind: 'unreachable' };

const NOT_FOUND_MESSAGE = 'the server does not know this task (expired, or its store was reset)';

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
  statuses: ReadonlySet<string> | undefined,
  flags: ConnectionFlags,
): Promise<number> {
  const all = await withLiveStatus(ledger.list(), flags);
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
  const now = Date.now();
  const lines = alignColumns([
    ['ID', 'SERVER', 'TOOL', 'STATUS', 'AGE', 'MESSAGE'],
    ...rows.map((row) => [
      row.entry.id,
      row.entry.server,
      row.entry.tool,
      row.live ? shownStatus(row) : `${shownStatus(row)}?`,
      formatAge(now - row.entry.createdAt),
      (row.statusMessage ?? '').replace(/\s+/g, ' '),
    ]),
  ]);
  for (const line of lines) process.stdout.write(`${line}\n`);
  return 0;
}

/** The entries with the status their servers report now (asked at once, two seconds at most). */
export async function withLiveStatus(
  entries: LedgerEntry[],
  flags: ConnectionFlags,
): Promise<Row[]> {
  const signal = AbortSignal.timeout(LIVE_TIMEOUT_MS);
  const clients = new Map<string, TaskrailClient>();
  const sessions = new Map<string, Promise<Session2025>>();
  try {
    return await Promise.all(
      entries.map(async (entry): Promise<Row> => {
        const ledgerRow = { entry, status: entry.status, statusMessage: entry.statusMessage };
        if (isFinal(entry.status)) return { ...ledgerRow, live: true, source: 'ended' };
        const answer =
          entry.protocolVersion === WIRE_2025_VERSION
            ? await fetch2025(sessionFor(sessions, entry, flags, signal), entry.id, signal)
            : await fetchLive(clientFor(clients, entry, flags), entry.id, signal);
        if (answer.kind === 'unreachable')
          return { ...ledgerRow, live: false, source: 'unreachable' };
        if (answer.kind === 'not_found') {
          const gone = { status: 'lost', statusMessage: NOT_FOUND_MESSAGE };
          return { entry, ...gone, live: true, source: 'not_found' };
        }
        const { status, statusMessage } = answer.task;
        return { entry, status, statusMessage, live: true, source: 'server' };
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
): Promise<LiveAnswer> {
  try {
    const reply = await (await session).request('tasks/get', { taskId: id }, { signal });
    if (reply.kind === 'error') return { kind: 'not_found' };
    if (typeof reply.result['status'] !== 'string') return { kind: 'unreachable' };
    const message = reply.result['statusMessage'];
    const status = reply.result['status'] as DetailedTask['status'];
    return {
      kind: 'task',
      task: { status, ...(typeof message === 'string' ? { statusMessage: message } : {}) },
    };
  } catch {
    return { kind: 'unreachable' };
  }
}

function sessionFor(
  sessions: Map<string, Promise<Session2025>>,
  entry: LedgerEntry,
  flags: ConnectionFlags,
  signal: AbortSignal,
): Promise<Session2025> {
  const connection = connectionOf(flags, entry.bearer);
  const key = `${entry.server}\n${connection.bearer ?? ''}`;
  let session = sessions.get(key);
  if (session === undefined) {
    session = Session2025.open({
      url: entry.server,
      clientInfo: { name: 'taskrail', version: packageVersion() },
      capabilities: { tasks: {} },
      signal,
      ...connection,
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
): Promise<LiveAnswer> {
  try {
    const task = await client.fetchTask(id, signal);
    return task === undefined ? { kind: 'not_found' } : { kind: 'task', task };
  } catch {
    return { kind: 'unreachable' };
  }
}

/** One read-only client per server and credential; the ledger is never written by `list`. */
function clientFor(
  clients: Map<string, TaskrailClient>,
  entry: LedgerEntry,
  flags: ConnectionFlags,
): TaskrailClient {
  const connection = connectionOf(flags, entry.bearer);
  const key = `${entry.server}\n${connection.bearer ?? ''}`;
  let client = clients.get(key);
  if (client === undefined) {
    client = new TaskrailClient({
      url: entry.server,
      ledger: new MemoryLedger(),
      push: false,
      ...connection,
    });
    clients.set(key, client);
  }
  return client;
}
