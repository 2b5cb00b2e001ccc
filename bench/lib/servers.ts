/**
 * Baseline servers for the HTTP benchmarks, run as child processes: `node lib/servers.js KIND`
 * listens on 127.0.0.1 (a free port) and prints `listening URL`. KIND is
 * - `bare`: node:http answering every POST with one fixed JSON-RPC result (the ceiling);
 * - `sdk-v2`: `createMcpHandler` with the same four tools as taskrail, their schemas built once
 *   (as taskrail builds them), one McpServer per request (as taskrail), the body read, parsed
 *   and handed to the SDK by taskrail's own Node adapter (as taskrail);
 * - `sdk-v1`: SDK v1.32.2, one stateful session, experimental tasks on its InMemoryTaskStore,
 *   the same no-op as a task tool (the most favourable v1 set-up: no per-request server);
 * - `sqlite-get PATH` / `sqlite-create PATH`: the SQLite floors of a durable tasks/get and
 *   create+run (_sqlite-floor.ts);
 * - `sqlite-create-statements PATH`: the create floor with the SQLite store's own statements
 *   (_statements-floor.ts): what its promises cost with no engine around them;
 * - `wait-10ms`: node:http answering every POST 10 ms after its body arrived (the floor of the
 *   end-to-end sections: one request, the tool's own wait, one reply; nothing stored);
 * - `push-10ms PATH`: the least durable push of a 10 ms tool's outcome (_push-floor.ts).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function bare(): Promise<Handler> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [] } });
  return (req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
  };
}

async function waitTenMs(): Promise<Handler> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [] } });
  return (req, res) => {
    req.resume();
    req.on('end', () =>
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      }, 10),
    );
  };
}

// Each kind imports only what it uses, so a server's resting memory is its own.
async function sdkV2(): Promise<Handler> {
  const { createMcpHandler, McpServer } = await import('@modelcontextprotocol/server');
  const z = await import('zod/v4');
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  // The same four tools taskrail serves in this benchmark (_tools.ts), so that the comparison
  // measures the task layer, not the SDK's per-request cost of registering more or fewer tools.
  // Like taskrail, it builds its schemas and tool configs once and only the McpServer per
  // request.
  const ioWaitConfig = {
    description: 'waits `ms` (an I/O-bound job)',
    inputSchema: z.object({ ms: z.number() }),
  };
  const noopConfig = { description: 'does nothing' };
  const tenMsConfig = { description: 'waits 10 ms' };
  const noop = () => ({ content: [] });
  const tenMs = async () => {
    await wait(10);
    return { content: [] };
  };
  const ioWait = async ({ ms }: { ms: number }) => {
    await wait(ms);
    return { content: [] };
  };
  const cpuBurnConfig = {
    description: 'keeps the CPU busy for `ms` (a CPU-bound job)',
    inputSchema: z.object({ ms: z.number() }),
  };
  const cpuBurn = ({ ms }: { ms: number }) => {
    const until = performance.now() + ms;
    while (performance.now() < until) {
      // burning CPU is the job
    }
    return { content: [] };
  };
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: 'bench-v2', version: '1.0.0' });
    server.registerTool('noop', noopConfig, noop);
    server.registerTool('ten_ms', tenMsConfig, tenMs);
    server.registerTool('io_wait', ioWaitConfig, ioWait);
    server.registerTool('cpu_burn', cpuBurnConfig, cpuBurn);
    return server;
  });
  // taskrail reads and parses the body itself and hands the SDK the parsed value with its own
  // Node adapter (src/server/http/sdk-answer.ts: no re-serialized body, a JSON answer in one write);
  // the baseline gets the same advantage, so the ratio measures the task layer alone.
  const { readNodeBody } = await import('../../src/server/http/body.js');
  const { answerWithSdk } = await import('../../src/server/http/sdk-answer.js');
  return (req, res) =>
    void (async () => {
      const body = await readNodeBody(req, 4 * 1024 * 1024);
      if (!body.ok) return void res.writeHead(400).end();
      await answerWithSdk(handler.fetch, req, res, JSON.parse(body.text) as unknown);
    })();
}

async function sdkV1(): Promise<Handler> {
  const { McpServer: McpServerV1 } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const { StreamableHTTPServerTransport } =
    await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const { InMemoryTaskStore } =
    await import('@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js');
  const taskStore = new InMemoryTaskStore();
  const server = new McpServerV1(
    { name: 'bench-v1', version: '1.0.0' },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore,
    },
  );
  server.experimental.tasks.registerToolTask(
    'noop',
    { description: 'does nothing', execution: { taskSupport: 'optional' } },
    {
      createTask: async (extra) => {
        const task = await extra.taskStore.createTask({ ttl: 3_600_000, pollInterval: 1 });
        await extra.taskStore.storeTaskResult(task.taskId, 'completed', { content: [] });
        return { task };
      },
      getTask: async (extra) => (await extra.taskStore.getTask(extra.taskId)) as never,
      getTaskResult: async (extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as never,
    },
  );
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse: true,
  });
  void server.connect(transport);
  return (req, res) => void transport.handleRequest(req, res);
}

// The SQLite floors (_sqlite-floor.ts) take the database path as their argument.
const floor = (kind: 'sqliteGet' | 'sqliteCreate') => async (): Promise<Handler> =>
  (await import('./sqlite-floor.js'))[kind](process.argv[3] ?? '');
const kinds: Record<string, () => Promise<Handler>> = {
  bare,
  'wait-10ms': waitTenMs,
  'sdk-v2': sdkV2,
  'sdk-v1': sdkV1,
  'sqlite-get': floor('sqliteGet'),
  'sqlite-create': floor('sqliteCreate'),
  'push-10ms': async () => (await import('./push-floor.js')).pushAfterTenMs(process.argv[3] ?? ''),
  'sqlite-create-statements': async () =>
    (await import('./statements-floor.js')).sqliteCreateStatements(process.argv[3] ?? ''),
};
const make = kinds[process.argv[2] ?? ''];
if (make === undefined) throw new Error(`usage: lib/servers.js ${Object.keys(kinds).join('|')}`);
const http = createServer(await make());
http.listen(0, '127.0.0.1', () => {
  const { port } = http.address() as AddressInfo;
  process.stdout.write(`listening http://127.0.0.1:${port}/mcp\n`);
});
process.once('SIGTERM', () => process.exit(0));
