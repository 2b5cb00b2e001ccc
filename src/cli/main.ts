#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { packageVersion } from './package-info.js';
import { registerServe } from './serve.js';
import { registerCall } from './call.js';
import { registerTasks } from './tasks.js';
import { registerWorker } from './worker.js';
import { registerAdmin } from './admin.js';

/** Usage errors exit 4 (interface.md); --help and --version exit 0. */
export const EXIT_USAGE = 4;

export function buildProgram(): Command {
  const program = new Command('taskrail')
    .description('Durable MCP task runtime: serve tools as tasks, call them, follow them.')
    .version(packageVersion(), '-V, --version')
    .showHelpAfterError('(add --help for usage)')
    .exitOverride();
  // One line per subcommand; each lives in its own file.
  registerServe(program);
  registerCall(program);
  registerTasks(program);
  registerWorker(program);
  registerAdmin(program);
  return program;
}

async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : EXIT_USAGE);
    process.stderr.write(
      `taskrail: error: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(EXIT_USAGE);
  }
}

void main(process.argv);
