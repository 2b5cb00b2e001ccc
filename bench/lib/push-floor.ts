/**
 * The least a durable task server does to push a 10 ms tool's outcome on the 2026-07-28 wire,
 * with nothing of taskrail: `tools/call` inserts the task (an autocommit on SQLite, WAL,
 * synchronous=NORMAL) before it answers, starts the 10 ms wait after the answer, then writes the
 * task completed and only then pushes it on the `subscriptions/listen` stream the client opened
 * for it (or answers a listen that comes after with the outcome at once). No checks, no engine,
 * no wire beyond what its one client sends. The end-to-end section's "least durable push" row.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import Database from 'better-sqlite3';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface Message {
  id: unknown;
  method: string;
  params: { notifications?: { taskIds?: string[] } };
}

const frame = (message: object) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;
const taskNote = (taskId: string, status: string) =>
  frame({
    jsonrpc: '2.0',
    method: 'notifications/tasks',
    params: { taskId, status, ...(status === 'completed' ? { result: { content: [] } } : {}) },
  });

export function pushAfterTenMs(path: string): Handler {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, status TEXT, result TEXT)');
  const insert = db.prepare("INSERT INTO tasks (id, status) VALUES (?, 'working')");
  const finish = db.prepare("UPDATE tasks SET status = 'completed', result = ? WHERE id = ?");
  const listening = new Map<string, ServerResponse>();
  const finished = new Set<string>();
  let next = 0;
  const create = (message: Message, res: ServerResponse) => {
    const taskId = `push-floor-${next++}`;
    insert.run(taskId);
    const result = { resultType: 'task', taskId, status: 'working' };
    const body = JSON.stringify({ jsonrpc: '2.0', id: message.id, result });
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    setTimeout(() => {
      finish.run('{"content":[]}', taskId);
      const stream = listening.get(taskId);
      if (stream === undefined) return void finished.add(taskId);
      listening.delete(taskId);
      stream.end(taskNote(taskId, 'completed'));
    }, 10);
  };
  const listen = (message: Message, res: ServerResponse) => {
    const taskId = message.params.notifications?.taskIds?.[0] ?? '';
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (finished.delete(taskId)) return void res.end(taskNote(taskId, 'completed'));
    res.write(taskNote(taskId, 'working'));
    listening.set(taskId, res);
  };
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Message;
      (message.method === 'tools/call' ? create : listen)(message, res);
    });
  };
}
