import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { TaskrailClient, clientOptionsFromEnv } from '../client/index.js';
import { addConnectionOptions, connectionOf, type ConnectionFlags } from './options.js';
import { follow, parseArguments, printOutcome, reportError, SigintRouter } from './host-output.js';
import { ProgressLine } from './host-progress.js';
import { followHandle, handleOf } from './call-handle.js';
import { terminalInput } from './host-prompt.js';
import { OutputPrinter, withWholeResult } from './host-task-output.js';

interface CallFlags extends ConnectionFlags {
  args?: string;
  argsFile?: string;
  tasks: boolean;
  json?: boolean;
  detach?: boolean;
}

export function registerCall(program: Command): void {
  const call = program
    .command('call')
    .description('call a tool the way a host does, following the task it may become')
    .argument('<url>', 'the MCP endpoint, e.g. http://127.0.0.1:3000/mcp')
    .argument('<tool>', 'the tool name')
    .option('--args <json>', 'the arguments as a JSON object')
    .option('--args-file <file>', 'read the arguments (a JSON object) from a file')
    .option(
      '--no-tasks',
      'do not declare the tasks extension (the answer comes inline, or as a handle this follows)',
    )
    .option('--json', 'print the raw JSON result')
    .option('--detach', 'print the task id and return as soon as the task exists');
  addConnectionOptions(call).action(async (url: string, tool: string, flags: CallFlags) => {
    process.exitCode = await runCall(url, tool, flags);
  });
}

async function runCall(url: string, tool: string, flags: CallFlags): Promise<number> {
  const args = readArguments(flags);
  if (!URL.canParse(url)) throw new Error(`not a URL: ${url}`);
  const progress = new ProgressLine();
  const interrupt = new AbortController();
  const env = clientOptionsFromEnv(process.env);
  const client = new TaskrailClient({
    url,
    ...env,
    tasks: flags.tasks && env.tasks !== false,
    background: env.background ?? true,
    input: terminalInput(progress, interrupt.signal),
    onEvent: progress.onEvent,
    ...connectionOf(flags),
  });
  // A SIGINT while tools/call is in flight is held until the task exists, then cancels it.
  const sigint = new SigintRouter((count) => {
    if (count > 1) process.exit(3);
    progress.note('interrupted: cancelling as soon as the server answers…');
  });
  let printer: OutputPrinter | undefined;
  try {
    const call = await client.callTool(tool, args);
    if (flags.detach === true && call.taskId !== undefined) {
      call.detach();
      process.stdout.write(`${call.taskId}\n`);
      return 0;
    }
    if (call.taskId !== undefined) progress.note(`task ${call.taskId} created`);
    // --json keeps standard output to the one JSON result; the output is in `tasks output`.
    printer =
      call.taskId === undefined || flags.json === true
        ? undefined
        : new OutputPrinter(client, call.taskId, progress);
    const outcome = call.outcome ?? (await follow(call, progress, interrupt, sigint));
    await printer?.finish(outcome.kind !== 'lost');
    // A server without tasks for this call may hand back a task id past its inline wait.
    const final =
      handleOf(outcome) === undefined
        ? outcome
        : await followHandle(client, outcome, progress, sigint);
    const shown = flags.json === true ? final : await withWholeResult(client, final);
    return printOutcome(shown, flags.json === true);
  } catch (error) {
    progress.stop();
    return reportError(error);
  } finally {
    printer?.stop();
    sigint.dispose();
    client.close();
  }
}

function readArguments(flags: CallFlags): Record<string, unknown> {
  if (flags.args !== undefined && flags.argsFile !== undefined) {
    throw new Error('give either --args or --args-file, not both');
  }
  if (flags.argsFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(flags.argsFile, 'utf8');
    } catch (error) {
      throw new Error(`cannot read --args-file ${flags.argsFile}: ${(error as Error).message}`);
    }
    return parseArguments(text, `--args-file ${flags.argsFile}`);
  }
  return parseArguments(flags.args, '--args');
}
