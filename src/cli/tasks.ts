import type { Command } from 'commander';
import {
  Ledger,
  TaskrailClient,
  clientOptionsFromEnv,
  isFinal,
  taskResourceUri,
  type LedgerEntry,
} from '../client/index.js';
import { follow, printOutcome, reportError, SigintRouter } from './host-output.js';
import { ProgressLine } from './host-progress.js';
import { terminalInput } from './host-prompt.js';
import { addConnectionOptions, connectionOf, type ConnectionFlags } from './options.js';
import { showTask } from './tasks-show.js';
import { listTasks, parseStatusFilter } from './tasks-list.js';
import { runResume } from './tasks-resume.js';
import { OutputPrinter, withWholeResult } from './host-task-output.js';

export function registerTasks(program: Command): void {
  const tasks = program
    .command('tasks')
    .description("work on the client's task ledger ($TASKRAIL_HOME)");
  const sub = (name: string): Command => addConnectionOptions(tasks.command(name));
  sub('list')
    .description(
      "one line per task: id, server, tool, status (the server's, live; `?` when unreachable), age, last message",
    )
    .option('--json', 'print a JSON array of records (the fields of `tasks show --json`)')
    .option(
      '--status <list>',
      'only these statuses (comma-separated); tool_error: completed with an isError result',
      parseStatusFilter,
    )
    .action((flags: TaskFlags & { status?: Set<string> }) =>
      withLedger((ledger) => listTasks(ledger, flags.json === true, flags.status, flags)),
    );
  sub('show')
    .argument('<id>')
    .description("the task as its server reports it now, else the ledger's last copy")
    .option('--json', 'print the record as one JSON object')
    .action((id: string, flags: TaskFlags) => withLedger((ledger) => show(ledger, id, flags)));
  sub('wait')
    .argument('<id>')
    .option('--json', 'print the raw JSON result')
    .description('wait for the task to end; exits with the codes of `call`')
    .action((id: string, flags: TaskFlags) => withLedger((ledger) => wait(ledger, id, flags)));
  sub('output')
    .argument('<id>')
    .option('--follow', 'keep printing as the output grows, until the task ends')
    .description("print the task's output (what the tool wrote with ctx.output) so far")
    .action((id: string, flags: TaskFlags & { follow?: boolean }) =>
      withLedger((ledger) => output(ledger, id, flags)),
    );
  sub('cancel')
    .argument('<id>')
    .description('send tasks/cancel and wait for a terminal status')
    .action((id: string, flags: TaskFlags) => withLedger((ledger) => cancel(ledger, id, flags)));
  sub('answer')
    .argument('<id>')
    .description("answer a parked task's questions at the terminal")
    .action((id: string, flags: TaskFlags) => withLedger((ledger) => answer(ledger, id, flags)));
  sub('resume')
    .option('--all', 'also take tasks another live process is still waiting on')
    .description('reattach to unfinished tasks after a crash or restart')
    .action((flags: TaskFlags & { all?: boolean }) =>
      withLedger((ledger) => runResume(ledger, flags.all === true, connectionOf(flags))),
    );
}

interface TaskFlags extends ConnectionFlags {
  json?: boolean;
}

async function withLedger(run: (ledger: Ledger) => Promise<number> | number): Promise<void> {
  const ledger = Ledger.open(clientOptionsFromEnv(process.env).home);
  try {
    process.exitCode = await run(ledger);
  } finally {
    ledger.close();
  }
}

function show(ledger: Ledger, id: string, flags: TaskFlags): Promise<number> {
  return showTask(find(ledger, id), flags);
}

/** The full id, or a unique prefix of one (ids are long). */
export function find(ledger: Ledger, id: string): LedgerEntry {
  const exact = ledger.get(id);
  if (exact !== undefined) return exact;
  const matches = ledger.list().filter((e) => e.id.startsWith(id));
  if (matches.length === 1 && matches[0] !== undefined) return matches[0];
  throw new Error(
    matches.length === 0
      ? `no task '${id}' in the ledger ${ledger.path}`
      : `'${id}' matches ${matches.length} tasks`,
  );
}

function clientFor(
  ledger: Ledger,
  entry: LedgerEntry,
  flags: ConnectionFlags,
  progress: ProgressLine,
  interrupt: AbortSignal,
): TaskrailClient {
  return new TaskrailClient({
    url: entry.server,
    ledger,
    input: terminalInput(progress, interrupt),
    onEvent: progress.onEvent,
    ...connectionOf(flags, entry.bearer),
  });
}

async function wait(ledger: Ledger, id: string, flags: TaskFlags): Promise<number> {
  const json = flags.json === true;
  const entry = find(ledger, id);
  const progress = new ProgressLine();
  const interrupt = new AbortController();
  const client = clientFor(ledger, entry, flags, progress, interrupt.signal);
  const sigint = new SigintRouter();
  let printer: OutputPrinter | undefined;
  try {
    const call = await client.attach(entry.id);
    printer = json ? undefined : new OutputPrinter(client, entry.id, progress);
    const outcome = await follow(call, progress, interrupt, sigint);
    await printer?.finish(outcome.kind !== 'lost');
    return printOutcome(json ? outcome : await withWholeResult(client, outcome), json);
  } catch (error) {
    return reportError(error);
  } finally {
    printer?.stop();
    sigint.dispose();
  }
}

async function cancel(ledger: Ledger, id: string, flags: TaskFlags): Promise<number> {
  const entry = find(ledger, id);
  const progress = new ProgressLine();
  const client = clientFor(ledger, entry, flags, progress, new AbortController().signal);
  try {
    const outcome = isFinal(entry.status)
      ? await (await client.attach(entry.id)).result()
      : await client.cancelTask(entry.id);
    progress.stop();
    process.stdout.write(`${entry.id} ${ledger.require(entry.id).status}\n`);
    return printOutcome(outcome, false);
  } catch (error) {
    progress.stop();
    return reportError(error);
  }
}

async function answer(ledger: Ledger, id: string, flags: TaskFlags): Promise<number> {
  const entry = find(ledger, id);
  const progress = new ProgressLine();
  const client = clientFor(ledger, entry, flags, progress, new AbortController().signal);
  try {
    const { outcome, answered } = await client.answerTask(entry.id);
    progress.stop();
    if (outcome !== undefined) {
      process.stderr.write(`task ${entry.id} has already ended\n`);
      return printOutcome(outcome, false);
    }
    const status = ledger.require(entry.id).status;
    process.stdout.write(
      `${entry.id} ${status} ${answered.length === 0 ? 'nothing to answer' : `answered ${answered.join(', ')}`}\n`,
    );
    return 0;
  } catch (error) {
    progress.stop();
    return reportError(error);
  }
}

/** `tasks output ID [--follow]`: the output so far, or all of it as it grows. */
async function output(
  ledger: Ledger,
  id: string,
  flags: ConnectionFlags & { follow?: boolean },
): Promise<number> {
  const following = flags.follow === true;
  const entry = find(ledger, id);
  const client = clientFor(ledger, entry, flags, new ProgressLine(), new AbortController().signal);
  const sigint = new SigintRouter();
  try {
    if (!following) {
      process.stdout.write(await client.resources.readWhole(taskResourceUri(entry.id, 'output')));
      return 0;
    }
    const stop = new AbortController();
    // Ctrl-C stops following; the task keeps running.
    sigint.route(() => stop.abort());
    for await (const chunk of client.resources.followOutput(entry.id, { signal: stop.signal }))
      process.stdout.write(chunk);
    return 0;
  } catch (error) {
    return reportError(error);
  } finally {
    sigint.dispose();
    client.close();
  }
}
