/** Request shapes for the servers the HTTP benchmarks compare taskrail with. */
import { checked, wire2026, type Call, type Endpoint } from './http.js';

const WIRE_2025_VERSION = '2025-11-25';

/** SDK v1: one initialized session; its task calls and tasks/get carry the session id. */
export async function v1Session(ep: Endpoint): Promise<(method: string, params: object) => Call> {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const init = await ep.post({
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: WIRE_2025_VERSION,
        capabilities: { tasks: {} },
        clientInfo: { name: 'bench', version: '1.0.0' },
      },
    }),
  });
  const session = init.headers['mcp-session-id'];
  if (typeof session !== 'string') throw new Error(`SDK v1 gave no session: ${init.body}`);
  const framed = {
    ...headers,
    'mcp-session-id': session,
    'mcp-protocol-version': WIRE_2025_VERSION,
  };
  await ep.post({
    headers: framed,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  return (method, params) => ({
    headers: framed,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
}

/** A completed SDK v1 task: its tasks/get call. */
export async function v1CompletedTaskGet(
  ep: Endpoint,
  session?: (method: string, params: object) => Call,
): Promise<Call> {
  const call = session ?? (await v1Session(ep));
  const created = await checked(
    ep,
    call('tools/call', { name: 'noop', arguments: {}, task: { ttl: 3_600_000 } }),
  );
  const taskId = (created['task'] as { taskId: string }).taskId;
  const get = call('tasks/get', { taskId });
  // SDK v1 stores the result at once; a durable server (taskrail's sessions) runs it after.
  for (let i = 0; i < 1000; i += 1) {
    const task = await checked(ep, get);
    if (task['status'] === 'completed') return get;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`2025-11-25 task ${taskId} did not complete`);
}

/** A completed taskrail task (the no-op run as a task): its tasks/get call. */
export async function taskrailCompletedTaskGet(ep: Endpoint): Promise<Call> {
  const created = await checked(ep, wire2026('tools/call', { name: 'noop', arguments: {} }, true));
  const taskId = String(created['taskId']);
  const get = wire2026('tasks/get', { taskId }, true);
  for (let i = 0; i < 1000; i += 1) {
    const task = await checked(ep, get);
    if (task['status'] === 'completed') return get;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`taskrail task ${taskId} did not complete`);
}

/** Sends `call` and insists on HTTP 200 (an error answer must not count as throughput). */
export function sender(ep: Endpoint, call: Call): () => Promise<void> {
  return async () => {
    const reply = await ep.post(call);
    if (reply.status !== 200) throw new Error(`HTTP ${reply.status}: ${reply.body}`);
  };
}
