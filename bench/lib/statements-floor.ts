/**
 * The create floor with taskrail's own SQL and none of its engine: what the SQLite store's
 * promises cost by themselves. Per request, in the commit shared by one event-loop turn's
 * writes (as the store's group commit): the per-principal cap's count read, the insert with the
 * lease held from the start and the meta a taskrail create stores, the count's row; after the
 * reply, in the next shared commit, the completion as the store's compare-and-set: the head
 * read, the guarded update, the count's row. The statements are the store's prepared ones
 * (src/stores/sqlite/statements.ts), so they follow any change to them. Next to the plain
 * floor (sqlite-floor.ts) it says how much of a create's budget the durable writes alone take.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { prepareStatements } from '../../src/stores/sqlite/statements.js';
import { newTaskId, newToken } from '../../src/task/ids.js';
import { batcher, open, readBody, reply } from './sqlite-floor.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const TTL_MS = 3_600_000;
const LEASE_MS = 30_000;
/** What `taskrail serve` stores as a bench create's meta (its caller, its wire, its run policy). */
const META = JSON.stringify({
  clientCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  callerConnection: 'c:floorFloorFloorF',
  'taskrail/run': { maxAttempts: 3 },
});

interface Counts {
  read: (principal: string) => unknown;
  add: (principal: string, delta: number) => unknown;
}

/**
 * The cap's count as the store keeps it (unfinished.ts): read at most once and written once per
 * principal per transaction, with the transaction's net change (`flush`, just before commit).
 */
function countsPerTransaction(counts: Counts) {
  const pending = new Map<string, number>();
  const count = (principal: string, delta: number) => {
    const before = pending.get(principal);
    if (before === undefined) counts.read(principal);
    pending.set(principal, (before ?? 0) + delta);
  };
  const flush = () => {
    for (const [principal, delta] of pending) if (delta !== 0) counts.add(principal, delta);
    pending.clear();
  };
  return { count, flush };
}

/** A created task's row, as the store's insert binds it (one literal: one hidden class). */
const createdRow = (id: string, now: number) => ({
  id,
  principal: 'anonymous',
  tool: 'noop',
  status: 'working',
  status_message: null,
  created_at: now,
  updated_at: now,
  ttl_ms: TTL_MS,
  expires_at: now + TTL_MS,
  poll_interval_ms: 1,
  revision: 1,
  attempt: 1,
  generation: 'v2',
  idempotency_key: null,
  arguments: '{}',
  result: null as string | null,
  error: null,
  input_requests: '{}',
  input_responses: '{}',
  meta: META,
  lease_owner: 'floor',
  lease_token: newToken(),
  lease_expires_at: now + LEASE_MS,
  expected_revision: 0,
});

export async function sqliteCreateStatements(path: string): Promise<Handler> {
  const db = await open(path);
  const sql = prepareStatements(db);
  const select = db.prepare('SELECT n FROM unfinished_counts WHERE principal = ?').pluck();
  const add = db.prepare(
    'INSERT INTO unfinished_counts (principal, n) VALUES (?, ?) ' +
      'ON CONFLICT (principal) DO UPDATE SET n = n + excluded.n',
  );
  const { count, flush } = countsPerTransaction({
    read: (principal) => select.get(principal),
    add: (principal, delta) => add.run(principal, delta),
  });
  const write = batcher(db, flush);
  // The completion as the store's compare-and-set: the head read, then the guarded update.
  const complete = (row: ReturnType<typeof createdRow>) => {
    const head = sql.selectHead.get(row.id) as unknown[];
    row.expected_revision = head[1] as number;
    row.status = 'completed';
    row.updated_at = Date.now();
    row.revision = 2;
    row.result = '{"content":[]}';
    sql.updateTask.run(row);
    count(row.principal, -1);
  };
  return (req, res) =>
    readBody(req, (text) => {
      const message = JSON.parse(text) as { id: unknown };
      const row = createdRow(newTaskId(), Date.now());
      const insert = () => {
        count(row.principal, 1);
        sql.insertLeasedTask.run(row);
      };
      write(insert, () => {
        const at = new Date(row.created_at).toISOString();
        const task = { taskId: row.id, status: 'working', createdAt: at, lastUpdatedAt: at };
        reply(res, message.id, { content: [], resultType: 'task', ...task, ttlMs: TTL_MS });
        write(
          () => complete(row),
          () => undefined,
        );
      });
    });
}
