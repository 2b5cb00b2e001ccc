import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createTaskServer,
  type TaskServer,
  type TaskServerOptions,
} from '../../src/server/index.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { tempDir } from '../client/support.js';
import { Gates } from './inline-fixture.js';

/** A text of `chars` characters, different at every offset so a slice proves where it came from. */
export function numbered(chars: number, unit = 'x'): string {
  let text = '';
  for (let line = 0; text.length < chars; line++) text += `${line}:${unit.repeat(20)}\n`;
  return text.slice(0, chars);
}

export const ROWS = {
  rows: Array.from({ length: 400 }, (_, n) => ({ n, name: `row number ${n}` })),
};

export interface ProfileServer {
  app: TaskServer;
  url: string;
  gates: Gates;
  close(): Promise<void>;
}

const silent = { info() {}, warn() {}, error() {} };

/**
 * A server on a real SQLite file with tools for the host paths: `report` (text of
 * `args.chars` characters of `args.unit`), `rows` (text and a ~10,000-character
 * structuredContent), `slow` (waits for its gate), `needs_task` (task-required, quick).
 */
export async function startProfileServer(
  options: Partial<TaskServerOptions> = {},
): Promise<ProfileServer> {
  const dir = tempDir('profiles');
  const store = new SqliteTaskStore(`${dir.path}/tasks.db`);
  const gates = new Gates();
  const app = createTaskServer({ store, logger: silent, fallbackTools: true, ...options });
  app.tool('report', { description: 'a report', task: true }, async (args) => ({
    content: [{ type: 'text', text: numbered(Number(args['chars']), String(args['unit'] ?? 'x')) }],
  }));
  app.tool('rows', { description: 'rows', task: true }, async () => ({
    content: [{ type: 'text', text: 'Here are the rows.' }],
    structuredContent: ROWS,
  }));
  app.tool('slow', { description: 'waits', task: true }, async (args) => {
    await gates.wait(String(args['gate']));
    return { content: [{ type: 'text', text: 'slow done' }] };
  });
  app.tool('needs_task', { description: 'task only', task: { mode: 'required' } }, async () => ({
    content: [{ type: 'text', text: 'required done' }],
  }));
  const { url } = await app.listen(0, '127.0.0.1');
  return {
    app,
    url,
    gates,
    async close() {
      await app.close(500);
      await store.close();
      dir.remove();
    },
  };
}

/** The official SDK client as host `name` would connect: 2025-11-25 session or 2026-07-28. */
export async function hostClient(
  url: string,
  name: string,
  wire: '2025-11-25' | '2026-07-28',
  bearer?: string,
): Promise<Client> {
  const client = new Client(
    { name, version: '1.0.0' },
    wire === '2026-07-28' ? { versionNegotiation: { mode: { pin: wire } } } : {},
  );
  const headers: Record<string, string> =
    bearer === undefined ? {} : { authorization: `Bearer ${bearer}` };
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
  );
  return client;
}

export type Block = { type: string; text?: string; uri?: string };
export type ToolResult = {
  content?: Block[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

export function textsOf(result: ToolResult): string[] {
  return (result.content ?? []).flatMap((b) => (b.type === 'text' ? [b.text ?? ''] : []));
}

export function linkOf(result: ToolResult, kind = 'result'): string {
  const link = (result.content ?? []).find(
    (b) => b.type === 'resource_link' && (b.uri ?? '').endsWith(`/${kind}`),
  );
  if (link?.uri === undefined) throw new Error(`no ${kind} link in ${JSON.stringify(result)}`);
  return link.uri;
}
