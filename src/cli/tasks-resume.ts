import { isClientError, resumeLedger, type Ledger } from '../client/index.js';
import { ProgressLine } from './host-progress.js';
import { terminalInput } from './host-prompt.js';
import type { Connection } from './options.js';

/**
 * `tasks resume [--all]`: reattaches to every unfinished task, prints `ID STATUS TOOL MESSAGE`
 * as each one ends, and exits 0 when all ended, 4 when a server could not be reached (or a task
 * needs input nobody can give here).
 */
export async function runResume(
  ledger: Ledger,
  all: boolean,
  connection: Connection,
): Promise<number> {
  const progress = new ProgressLine();
  const resumption = await resumeLedger({
    ledger,
    all,
    ...connection,
    input: terminalInput(progress, new AbortController().signal),
    onEvent: progress.onEvent,
  });
  let code = 0;
  try {
    await Promise.all(
      resumption.tasks.map(async (task) => {
        const id = task.entry.id;
        try {
          if (task.call === undefined) throw task.error;
          await task.call.result();
          const after = ledger.require(id);
          line(progress, `${id} ${after.status} ${after.tool} ${after.statusMessage ?? ''}`);
        } catch (error) {
          code = 4;
          const what = isClientError(error, 'CONNECTION')
            ? 'unreachable'
            : isClientError(error, 'INPUT_UNAVAILABLE')
              ? 'input_required'
              : 'error';
          line(
            progress,
            `${id} ${what} ${task.entry.tool} ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }),
    );
  } finally {
    progress.stop();
    resumption.close();
  }
  if (resumption.tasks.length === 0) process.stderr.write('nothing to resume\n');
  return code;
}

function line(progress: ProgressLine, text: string): void {
  progress.pause();
  process.stdout.write(`${text.trimEnd()}\n`);
  progress.resume();
}
