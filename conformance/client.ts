#!/usr/bin/env node
/**
 * The client leg of the official MCP conformance suite: `conformance client --command
 * "node .build/conformance/client.js" --scenario S`. The harness appends the mock server's URL
 * as the last argument and names the scenario in MCP_CONFORMANCE_SCENARIO. It runs the real
 * host client (tasks extension declared, in-memory ledger).
 */
import {
  MemoryLedger,
  TaskrailClient,
  exitCodeFor,
  type CallOutcome,
  type Tool,
} from '../src/client/index.js';

/** The fixture each known scenario calls; anything else calls the first listed tool. */
const SCENARIO_CALLS: Record<string, { tool: string; args: Record<string, unknown> }> = {
  tools_call: { tool: 'add_numbers', args: { a: 5, b: 3 } },
  'tasks-client-create-handling': {
    tool: 'long_running_echo',
    args: { text: 'hello from taskrail' },
  },
};

async function main(): Promise<number> {
  const url = process.argv.at(-1);
  if (url === undefined || !URL.canParse(url)) {
    process.stderr.write('usage: conformance-client.js SERVER_URL\n');
    return 4;
  }
  // The harness runs us under its own Node 22; a memory ledger needs no native SQLite driver.
  const ledger = new MemoryLedger();
  const client = new TaskrailClient({
    url,
    ledger,
    background: false,
    clientInfo: { name: 'taskrail-conformance-client', version: '0.1.0' },
    input: { elicitation: () => Promise.resolve({ action: 'decline' }) },
  });
  try {
    const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? 'tools_call';
    const known = SCENARIO_CALLS[scenario];
    const plan = known ?? firstTool(await client.listTools());
    if (plan === undefined) return 0;
    const call = await client.callTool(plan.tool, plan.args);
    const outcome = call.outcome ?? (await call.result());
    report(outcome);
    return outcome.kind === 'completed' || outcome.kind === 'tool_error' ? 0 : exitCodeFor(outcome);
  } finally {
    client.close();
    ledger.close();
  }
}

function firstTool(tools: Tool[]): { tool: string; args: Record<string, unknown> } | undefined {
  const tool = tools[0];
  return tool === undefined ? undefined : { tool: tool.name, args: {} };
}

function report(outcome: CallOutcome): void {
  process.stderr.write(`${outcome.kind}: ${JSON.stringify(outcome)}\n`);
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `conformance client: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  },
);
