import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

type Ending = {
  status: 'completed' | 'failed';
  result: { content: { type: 'text'; text: string }[]; isError?: boolean };
};

function build(store: InMemoryTaskStore): McpServer {
  const mcp = new McpServer(
    { name: 'sdk-v1-only', version: '1.0.0' },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore: store,
    },
  );
  mcp.registerTool('v1_plain', { description: 'plain' }, () => ({
    content: [{ type: 'text', text: 'plain v1' }],
  }));
  const taskTool = (name: string, ending: Ending): void => {
    mcp.experimental.tasks.registerToolTask(
      name,
      { description: name, execution: { taskSupport: 'required' } },
      {
        createTask: async (extra) => {
          const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 50 });
          // Finishes on its own shortly after creation, as a real background job would.
          setTimeout(
            () => void extra.taskStore.storeTaskResult(task.taskId, ending.status, ending.result),
            100,
          );
          return { task };
        },
        getTask: async (extra) => extra.taskStore.getTask(extra.taskId),
        getTaskResult: async (extra) =>
          (await extra.taskStore.getTaskResult(extra.taskId)) as never,
      },
    );
  };
  taskTool('v1_slow', {
    status: 'completed',
    result: { content: [{ type: 'text', text: 'slow done' }] },
  });
  taskTool('v1_broken', {
    status: 'failed',
    result: { content: [{ type: 'text', text: 'broken input' }], isError: true },
  });
  return mcp;
}

/** A server built the usual SDK 1.x way: stateful Streamable HTTP, 2025-11-25 only. */
export async function startSdkV1Server(): Promise<{ url: string; close(): Promise<void> }> {
  const store = new InMemoryTaskStore();
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body: unknown =
      chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const sessionId = req.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (transport === undefined && req.method === 'POST' && isInitializeRequest(body)) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void transports.set(id, created),
      });
      await build(store).connect(created);
      transport = created;
    }
    if (transport === undefined) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32000, message: 'Bad Request: No valid session ID provided' },
        }),
      );
      return;
    }
    await transport.handleRequest(req, res, body);
  };
  const http: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async close() {
      for (const transport of transports.values()) await transport.close();
      store.cleanup();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}
