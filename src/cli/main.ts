#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { EXIT_USAGE } from '../client/outcome.js';
import { packageVersion } from './package-info.js';

// Usage errors exit EXIT_USAGE; --help and --version exit 0.

type Register = (program: Command) => void;

/**
 * Each subcommand's module, loaded on demand: a resting `serve` must not carry BullMQ, the host
 * client or the terminal spinner it never uses (~25 MiB of RSS, measured by bench/http.ts).
 */
const COMMANDS: Record<string, () => Promise<Register>> = {
  serve: async () => (await import('./serve.js')).registerServe,
  proxy: async () => (await import('./proxy.js')).registerProxy,
  tools: async () => (await import('./tools.js')).registerTools,
  call: async () => (await import('./call.js')).registerCall,
  tasks: async () => (await import('./tasks.js')).registerTasks,
  worker: async () => (await import('./worker.js')).registerWorker,
  admin: async () => (await import('./admin.js')).registerAdmin,
};

/** The program with the subcommand named in `argv` only, or every one (help, unknown names). */
export async function buildProgram(argv: string[] = process.argv): Promise<Command> {
  const program = new Command('taskrail')
    .description('Durable MCP task runtime: serve tools as tasks, call them, follow them.')
    .version(packageVersion(), '-V, --version')
    .showHelpAfterError('(add --help for usage)')
    .exitOverride();
  const name = argv[2] ?? '';
  const named = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  for (const load of named === undefined ? Object.values(COMMANDS) : [named]) {
    (await load())(program);
  }
  return program;
}

/**
 * A reader that stops early (`taskrail tasks list | head`) closes the pipe: stop writing and
 * leave quietly, as Unix tools do, instead of dying with an EPIPE stack.
 */
function exitQuietlyOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  });
}

async function main(argv: string[]): Promise<void> {
  exitQuietlyOnClosedPipe(process.stdout);
  exitQuietlyOnClosedPipe(process.stderr);
  const program = await buildProgram(argv);
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
