/**
 * The client half of the end-to-end section's "least durable push": a 10 ms tool created over
 * HTTP, the task written to a SQLite ledger (WAL, synchronous=NORMAL) when its id arrives, a
 * `subscriptions/listen` stream opened for it, and the pushed outcome written to the ledger
 * before the call counts as done: what a host with a crash-proof ledger must do, with nothing
 * of taskrail's client. Timed as `clientLatency` times taskrail's (e2e.ts), with the floor's
 * round trips every other call in place of the bare wait.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pause, wire2026, type Call, type Endpoint } from './http.js';

export interface PushRun {
  taskrail: number[];
  bare: number[];
  floor: number[];
}

function post(agent: Agent, url: URL, call: Call, done?: (text: string) => boolean) {
  return new Promise<string>((resolve, reject) => {
    const headers = { ...call.headers, 'content-length': Buffer.byteLength(call.body) };
    const req = request(url, { method: 'POST', agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        if (done?.(text) === true) resolve(text);
      });
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
    req.end(call.body);
  });
}

const completedPushed = (text: string) => text.includes('"status":"completed"');

export async function leastDurablePush(
  url: string,
  count: number,
  floor: Endpoint,
): Promise<PushRun> {
  const home = mkdtempSync(join(tmpdir(), 'taskrail-bench-push-'));
  const ledger = new Database(join(home, 'ledger.db'));
  ledger.pragma('journal_mode = WAL');
  ledger.pragma('synchronous = NORMAL');
  ledger.exec('CREATE TABLE tasks (id TEXT PRIMARY KEY, status TEXT, result TEXT)');
  const record = ledger.prepare("INSERT INTO tasks (id, status) VALUES (?, 'working')");
  const settle = ledger.prepare('UPDATE tasks SET status = ?, result = ? WHERE id = ?');
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const target = new URL(url);
  const create = wire2026('tools/call', { name: 'ten_ms', arguments: {} }, true);
  const call = async () => {
    const created = JSON.parse(await post(agent, target, create)) as { result: { taskId: string } };
    const { taskId } = created.result;
    record.run(taskId);
    const listen = wire2026('subscriptions/listen', { notifications: { taskIds: [taskId] } }, true);
    const stream = await post(agent, target, listen, completedPushed);
    const data = stream.slice(stream.lastIndexOf('data: ') + 6);
    const pushed = JSON.parse(data) as { params: { status: string; result: unknown } };
    settle.run(pushed.params.status, JSON.stringify(pushed.params.result), taskId);
  };
  const run: PushRun = { taskrail: [], bare: [], floor: [] };
  const floorCall = wire2026('tools/call', { name: 'ten_ms', arguments: {} }, false);
  try {
    for (let i = 0; i < 10; i += 1) await call(); // warm-up
    for (let i = 0; i < count; i += 1) {
      const started = performance.now();
      await call();
      run.taskrail.push(performance.now() - started);
      const waited = performance.now();
      if (i % 2 === 1) {
        await floor.post(floorCall);
        run.floor.push(performance.now() - waited);
      } else {
        await pause(10);
        run.bare.push(performance.now() - waited);
      }
    }
  } finally {
    agent.destroy();
    ledger.close();
    rmSync(home, { recursive: true, force: true });
  }
  return run;
}
