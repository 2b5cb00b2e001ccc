import type { Command } from 'commander';
import { MemoryLedger, TaskrailClient, type Tool } from '../client/index.js';
import { Session2025 } from '../client/session-2025.js';
import { packageVersion } from './package-info.js';
import { EXIT_USAGE } from '../client/outcome.js';
import { reportError } from './host-output.js';
import {
  addConnectionOptions,
  connectionOf,
  type Connection,
  type ConnectionFlags,
} from './options.js';
import { alignColumns } from './table.js';

interface ToolsFlags extends ConnectionFlags {
  json?: boolean;
}

type TaskMode = 'forbidden' | 'optional' | 'required';

export function registerTools(program: Command): void {
  addConnectionOptions(
    program
      .command('tools')
      .argument('<url>', "the server's MCP endpoint, e.g. http://127.0.0.1:3000/mcp")
      .description("list a server's tools: name, task mode, description")
      .option('--json', 'print the tools/list result'),
  ).action(async (url: string, flags: ToolsFlags) => {
    process.exitCode = await listTools(url, flags);
  });
}

async function listTools(url: string, flags: ToolsFlags): Promise<number> {
  if (!URL.canParse(url)) {
    process.stderr.write(`taskrail: error: not a URL: ${url}\n`);
    return EXIT_USAGE;
  }
  const connection = connectionOf(flags);
  const client = new TaskrailClient({
    url,
    ledger: new MemoryLedger(),
    push: false,
    ...connection,
  });
  try {
    const tools = await client.listTools();
    if (flags.json === true) {
      process.stdout.write(`${JSON.stringify({ tools })}\n`);
      return 0;
    }
    const modes = await taskModes(url, tools, connection);
    const rows = tools.map((tool) => toolColumns(tool, modes.get(tool.name)));
    for (const line of alignColumns(rows)) process.stdout.write(`${line}\n`);
    return 0;
  } catch (error) {
    return reportError(error);
  } finally {
    client.close();
  }
}

/** `name`, `mode`, the description's first line; `-` when the server does not say the mode. */
export function toolColumns(tool: Tool, mode: TaskMode | undefined): string[] {
  const description = (tool.description ?? '').split('\n')[0]?.trim() ?? '';
  return [tool.name, mode ?? '-', description];
}

/**
 * The 2026-07-28 wire does not put a task mode on tools (any tool may answer with a task), so
 * the mode comes from `execution.taskSupport` where a server sends it, else from the same
 * server's 2025-11-25 `tools/list`, which carries it. A server that speaks only the 2026-07-28 wire
 * shows `-`.
 */
async function taskModes(
  url: string,
  tools: Tool[],
  connection: Connection,
): Promise<Map<string, TaskMode>> {
  const modes = new Map<string, TaskMode>();
  for (const tool of tools) {
    const mode = taskSupport(tool);
    if (mode !== undefined) modes.set(tool.name, mode);
  }
  if (modes.size === tools.length) return modes;
  const tools2025 = await listTools2025(url, connection).catch(() => []);
  for (const tool of tools2025) {
    const mode = taskSupport(tool);
    if (mode !== undefined && !modes.has(tool.name)) modes.set(tool.name, mode);
  }
  return modes;
}

async function listTools2025(url: string, connection: Connection): Promise<Tool[]> {
  const session = await Session2025.open({
    url,
    ...connection,
    clientInfo: { name: 'taskrail', version: packageVersion() },
    capabilities: { tasks: { requests: { tools: { call: {} } } } },
  });
  try {
    const reply = await session.request('tools/list', {});
    if (reply.kind !== 'result' || !Array.isArray(reply.result['tools'])) return [];
    return reply.result['tools'] as Tool[];
  } finally {
    await session.close();
  }
}

function taskSupport(tool: Tool): TaskMode | undefined {
  const execution = tool['execution'];
  if (execution === null || typeof execution !== 'object') return undefined;
  const support = (execution as { taskSupport?: unknown }).taskSupport;
  return support === 'optional' || support === 'required' || support === 'forbidden'
    ? support
    : undefined;
}
