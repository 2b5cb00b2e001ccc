import { InvalidArgumentError, type Command } from 'commander';
import { updateTask } from '../runtime/writes.js';
import type { TaskStore } from '../store/port.js';
import { DEFAULT_STORE_URL, openStore, storePeers } from '../stores/open.js';
import { missingPeersError } from '../task/peer-dependency.js';
import { pendingInputRequests, type TaskRecord } from '../task/record.js';
import { isTerminal } from '../task/status.js';
import { isoTime } from '../task/time.js';
import {
  listByOutcome,
  OUTCOME_SCAN_LIMIT,
  type OutcomeListQuery,
} from '../server/admin/outcomes.js';
import { EXIT_CODES } from '../client/outcome.js';
import { isTaskOutcome, outcomeOf, splitOutcomeList, type TaskOutcome } from '../task/outcome.js';
import { cancel } from '../task/transitions.js';
import { attemptsText, isWaitKind, runViewOf, waitText, type WaitKind } from '../task/run-meta.js';
import { runFieldsOf } from '../server/admin/views.js';
import { alignColumns } from './table.js';

interface StoreFlag {
  store?: string;
}

interface ListFlags extends StoreFlag {
  status?: TaskOutcome[];
  waiting?: WaitKind[];
  tool?: string;
  principal?: string;
  limit: number;
  json?: boolean;
}

/** An id prefix scans this many tasks at most. */
const SCAN_LIMIT = OUTCOME_SCAN_LIMIT;

/**
 * A `--status` value: a task status, or `tool_error` for a task that completed with an
 * `isError` result. As on the dashboard (its "tool error" badge, `outcome` in its API and
 * `/metrics`), such a task is a tool error and not `completed`.
 */
function parseStatuses(value: string): TaskOutcome[] {
  const statuses = splitOutcomeList(value);
  if (!statuses.every(isTaskOutcome)) {
    throw new InvalidArgumentError(
      'must be working, input_required, completed, tool_error, failed or cancelled (comma-separated)',
    );
  }
  return statuses;
}

function parseWaitKinds(value: string): WaitKind[] {
  const kinds = value.split(',').map((s) => s.trim());
  if (!kinds.every(isWaitKind)) {
    throw new InvalidArgumentError('must be backoff, sleep or permit (comma-separated)');
  }
  return kinds;
}

function parseLimit(value: string): number {
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1)
    throw new InvalidArgumentError('must be a positive integer');
  return limit;
}

const STORE_HELP = `task store URL (default: $TASKRAIL_STORE or ${DEFAULT_STORE_URL})`;

export function registerAdmin(program: Command): void {
  const admin = program
    .command('admin')
    .description("operators: list, show and cancel any principal's tasks on the store itself");
  admin
    .command('list')
    .description(
      'one line per task, newest first: id, status, tool, principal, age, attempts, wait, message',
    )
    .option('--store <url>', STORE_HELP)
    .option(
      '--status <list>',
      'only these statuses (comma-separated); tool_error: completed with an isError result',
      parseStatuses,
    )
    .option(
      '--waiting <list>',
      'only working tasks in these waits (comma-separated): backoff (before a retry), sleep (ctx.sleep), permit (a concurrency slot)',
      parseWaitKinds,
    )
    .option('--tool <name>', 'only this tool')
    .option('--principal <name>', 'only this principal')
    .option('--limit <n>', 'at most this many tasks', parseLimit, 100)
    .option('--json', 'print a JSON array of records')
    .action((flags: ListFlags) => withStore(flags, (store) => list(store, flags)));
  admin
    .command('show')
    .argument('<id>', 'a task id or a unique prefix of one')
    .description('print the task record (and its recorded steps) as JSON')
    .option('--store <url>', STORE_HELP)
    .action((id: string, flags: StoreFlag) => withStore(flags, (store) => show(store, id)));
  admin
    .command('cancel')
    .argument('<id>', 'a task id or a unique prefix of one')
    .description(
      'move a live task to cancelled (its worker sees it at the next heartbeat); exits 3 once cancelled',
    )
    .option('--store <url>', STORE_HELP)
    .option('--message <text>', 'the statusMessage to leave', 'Cancelled by an operator.')
    .action((id: string, flags: StoreFlag & { message: string }) =>
      withStore(flags, (store) => cancelTask(store, id, flags.message)),
    );
}

async function withStore(
  flags: StoreFlag,
  run: (store: TaskStore) => Promise<number>,
): Promise<void> {
  const url = flags.store ?? process.env['TASKRAIL_STORE'] ?? DEFAULT_STORE_URL;
  const missing = missingPeersError([storePeers(url, false)]);
  if (missing !== undefined) throw missing;
  const store = await openStore(url);
  try {
    process.exitCode = await run(store);
  } finally {
    await store.close();
  }
}

function age(task: TaskRecord): string {
  const s = Math.max(0, Math.floor((Date.now() - task.createdAt) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

async function list(store: TaskStore, flags: ListFlags): Promise<number> {
  const tasks = await findListed(store, flags);
  if (flags.json === true) {
    process.stdout.write(`${JSON.stringify(tasks.map(view), null, 2)}\n`);
    return 0;
  }
  const now = Date.now();
  const rows = tasks.map((task) => {
    const run = runViewOf(task, now);
    return [
      task.id,
      outcomeOf(task),
      task.tool,
      task.principal,
      age(task),
      attemptsText(run),
      run.waiting === undefined ? '-' : waitText(run.waiting),
      (task.statusMessage ?? '').replace(/\s+/g, ' '),
    ];
  });
  const header = ['ID', 'STATUS', 'TOOL', 'PRINCIPAL', 'AGE', 'ATTEMPT', 'WAITING', 'MESSAGE'];
  for (const line of alignColumns([header, ...rows])) process.stdout.write(`${line}\n`);
  return 0;
}

async function findListed(store: TaskStore, flags: ListFlags): Promise<TaskRecord[]> {
  const query: OutcomeListQuery = { limit: flags.limit };
  if (flags.status !== undefined) query.outcomes = flags.status;
  if (flags.waiting !== undefined) query.waiting = flags.waiting;
  if (flags.tool !== undefined) query.tool = flags.tool;
  if (flags.principal !== undefined) query.principal = flags.principal;
  return (await listByOutcome(store, query)).tasks;
}

/** The record with ISO times and the pending input keys spelled out. */
function view(task: TaskRecord): Record<string, unknown> {
  return {
    ...task,
    outcome: outcomeOf(task),
    ...runFieldsOf(task, Date.now()),
    createdAt: isoTime(task.createdAt),
    updatedAt: isoTime(task.updatedAt),
    expiresAt: task.expiresAt === null ? null : isoTime(task.expiresAt),
    pendingInputRequests: pendingInputRequests(task),
  };
}

async function show(store: TaskStore, idOrPrefix: string): Promise<number> {
  const task = await findTask(store, idOrPrefix);
  if (task === undefined) return lost(idOrPrefix);
  const steps = await store.loadSteps(task.id);
  process.stdout.write(`${JSON.stringify({ ...view(task), steps }, null, 2)}\n`);
  return 0;
}

/**
 * Exits like `tasks cancel` (README, "Exit codes"): with the code of the status the task ends
 * in, so 3 once it is cancelled, and 0/1/2 when it had already completed or failed.
 */
async function cancelTask(store: TaskStore, idOrPrefix: string, message: string): Promise<number> {
  const before = await findTask(store, idOrPrefix);
  if (before === undefined) return lost(idOrPrefix);
  const id = before.id;
  const after = await updateTask(store, id, (task) => cancel(task, Date.now(), message));
  if (after === undefined) return lost(id);
  if (isTerminal(before.status)) {
    process.stderr.write(`taskrail: task ${id} is already ${after.status}; nothing to cancel\n`);
  }
  process.stdout.write(`${id} ${after.status}\n`);
  return exitCodeOf(after);
}

/** The exit code `call` and `tasks` give the same ending; a task not ended yet counts as lost. */
function exitCodeOf(task: TaskRecord): number {
  const outcome = outcomeOf(task);
  return outcome === 'working' || outcome === 'input_required'
    ? EXIT_CODES.lost
    : EXIT_CODES[outcome];
}

/** The task with this id, else the one task whose id starts with it (ids are long). */
async function findTask(store: TaskStore, idOrPrefix: string): Promise<TaskRecord | undefined> {
  const exact = await store.get(idOrPrefix);
  if (exact !== undefined || idOrPrefix === '') return exact;
  const matches: TaskRecord[] = [];
  let cursor: string | undefined;
  let scanned = 0;
  do {
    const page = await store.list(cursor === undefined ? { limit: 1000 } : { limit: 1000, cursor });
    matches.push(...page.tasks.filter((task) => task.id.startsWith(idOrPrefix)));
    scanned += page.tasks.length;
    cursor = page.nextCursor;
  } while (cursor !== undefined && matches.length < 2 && scanned < SCAN_LIMIT);
  if (matches.length > 1) {
    throw new Error(`'${idOrPrefix}' matches several tasks; give more of the id`);
  }
  return matches[0];
}

function lost(id: string): number {
  process.stderr.write(`taskrail: task ${id} not found (unknown or expired)\n`);
  return EXIT_CODES.lost;
}
