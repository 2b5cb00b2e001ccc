/**
 * The floors of a SQLite-backed task server, for the HTTP benchmarks: node:http servers that do
 * only what any durable `tasks/get` or create must do on SQLite, with nothing of taskrail (no
 * checks, no runtime, no events). `sqlite-get` parses the body, reads the row by id with one
 * prepared raw statement and answers the task, the reads and answers of one event-loop turn
 * together in its check phase (as taskrail answers its cached reads: neither alone gets the
 * fewer wake-ups of a turn's answers leaving together); `sqlite-create` inserts a row per
 * request, answers once the batch that holds it committed (writes of one event-loop turn share a
 * commit, as taskrail's group commit does) and then writes it `completed`, as a run of a
 * no-op would. Same file layout as taskrail's: its schema, WAL, synchronous=NORMAL.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import Database from 'better-sqlite3';
import { openStore } from '../../src/stores/open.js';
import { newTaskId } from '../../src/task/ids.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** The id of the completed task `sqlite-get` answers for (the benchmark asks for it). */
export const FLOOR_TASK_ID = 'floorFloorFloorFloor0000';

const COLUMNS =
  'id, principal, tool, status, created_at, updated_at, ttl_ms, expires_at, poll_interval_ms, ' +
  'revision, attempt, generation, arguments, result, input_requests, input_responses, meta';
const SERVER_INFO = { 'io.modelcontextprotocol/serverInfo': { name: 'floor', version: '1.0.0' } };
const TTL_MS = 3_600_000;

/** A file with taskrail's schema, opened as taskrail opens it (WAL, synchronous=NORMAL). */
export async function open(path: string): Promise<Database.Database> {
  await (await openStore(`sqlite:${path}`, { quiet: true })).close(); // creates the schema
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  return db;
}

function insertStatement(db: Database.Database): Database.Statement {
  const marks = COLUMNS.split(', ').map(() => '?');
  return db.prepare(`INSERT INTO tasks (${COLUMNS}) VALUES (${marks.join(', ')})`);
}

const row = (id: string, status: string, now: number, result: string | null) => [
  ...[id, 'anonymous', 'noop', status, now, now, TTL_MS, now + TTL_MS, 1, 1, 1, 'v2', '{}'],
  ...[result, '{}', '{}', '{}'],
];

export function readBody(req: IncomingMessage, then: (text: string) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => then(Buffer.concat(chunks).toString('utf8')));
}

export function reply(res: ServerResponse, id: unknown, result: object): void {
  const body = JSON.stringify({ jsonrpc: '2.0', id, result: { ...result, _meta: SERVER_INFO } });
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}

const iso = (ms: number) => new Date(ms).toISOString();

interface GetMessage {
  id: unknown;
  params: { taskId: string };
}

export async function sqliteGet(path: string): Promise<Handler> {
  const db = await open(path);
  insertStatement(db).run(...row(FLOOR_TASK_ID, 'completed', Date.now(), '{"content":[]}'));
  const select = db
    .prepare(`SELECT ${COLUMNS} FROM tasks WHERE id = ? AND (expires_at IS NULL OR expires_at > ?)`)
    .raw(true);
  const answer = (message: GetMessage, res: ServerResponse) => {
    const values = select.get(message.params.taskId, Date.now()) as unknown[];
    const stored = JSON.parse(values[13] as string) as object;
    reply(res, message.id, {
      resultType: 'complete',
      taskId: values[0],
      status: values[3],
      createdAt: iso(values[4] as number),
      lastUpdatedAt: iso(values[5] as number),
      ttlMs: values[6],
      pollIntervalMs: values[8],
      result: { ...stored, resultType: 'complete' },
    });
  };
  let turn: [GetMessage, ServerResponse][] = [];
  return (req, res) =>
    readBody(req, (text) => {
      if (turn.length === 0) {
        setImmediate(() => {
          const asked = turn;
          turn = [];
          for (const [message, waiting] of asked) answer(message, waiting);
        });
      }
      turn.push([JSON.parse(text) as GetMessage, res]);
    });
}

/**
 * Runs the writes queued during one turn of the event loop in one IMMEDIATE transaction;
 * `beforeCommit` runs last inside it (what the batch gathered and writes once).
 */
export function batcher(
  db: Database.Database,
  beforeCommit?: () => void,
): (write: () => void, done: () => void) => void {
  let queue: { write: () => void; done: () => void }[] = [];
  const commit = db.transaction((writes: typeof queue) => {
    writes.forEach((w) => w.write());
    beforeCommit?.();
  });
  return (write, done) => {
    if (queue.length === 0) {
      setImmediate(() => {
        const batch = queue;
        queue = [];
        commit.immediate(batch);
        for (const w of batch) w.done();
      });
    }
    queue.push({ write, done });
  };
}

export async function sqliteCreate(path: string): Promise<Handler> {
  const db = await open(path);
  const insert = insertStatement(db);
  const finish = db.prepare(
    "UPDATE tasks SET status = 'completed', updated_at = ?, revision = 2, result = ? WHERE id = ?",
  );
  const write = batcher(db);
  return (req, res) =>
    readBody(req, (text) => {
      const message = JSON.parse(text) as { id: unknown };
      const id = newTaskId(); // taskrail's ids: their B-tree locality is part of the floor
      const now = Date.now();
      write(
        () => insert.run(...row(id, 'working', now, null)),
        () => {
          const at = iso(now);
          const task = { taskId: id, status: 'working', createdAt: at, lastUpdatedAt: at };
          reply(res, message.id, { content: [], resultType: 'task', ...task, ttlMs: TTL_MS });
          write(
            () => finish.run(Date.now(), '{"content":[]}', id),
            () => undefined,
          );
        },
      );
    });
}
