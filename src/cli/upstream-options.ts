import { InvalidArgumentError, type Command } from 'commander';
import { describeUpstream, httpUpstream, startProxy, type UpstreamSpec } from '../proxy/index.js';
import { TaskrailError } from '../task/errors.js';
import { packageVersion } from './package-info.js';
import type { InstallTools } from './serve.js';

/** The upstream flags shared by `taskrail proxy` and `taskrail worker`. */
export interface UpstreamFlags {
  upstream?: string;
  upstreamHeader: string[];
  syncTools: string[];
  retryTools: string[];
  upstreamTimeout: number;
  upstreamConcurrency: number;
}

export function addUpstreamOptions(command: Command): Command {
  return command
    .argument(
      '[command...]',
      'after --: the command of a stdio MCP server, started and stopped by this process',
    )
    .option('--upstream <url>', 'the upstream Streamable HTTP endpoint')
    .option(
      '--upstream-header <header>',
      "header sent upstream, 'Name: value' (repeatable; e.g. credentials)",
      collect,
      [],
    )
    .option('--sync-tools <names>', 'comma-separated tools served without tasks', names, [])
    .option('--retry-tools <names>', 'comma-separated tools re-run after a proxy crash', names, [])
    .option(
      '--upstream-timeout <seconds>',
      'deadline of each upstream request (0 = none)',
      seconds,
      3600,
    )
    .option('--upstream-concurrency <n>', 'upstream calls in flight at once', positiveInt, 8);
}

/** True when the command line names an upstream at all (a worker may run a tool set instead). */
export function namesUpstream(command: string[], flags: UpstreamFlags): boolean {
  return flags.upstream !== undefined || command.length > 0;
}

/** What installs the upstream's tools on a server or worker, and how its ready line names them. */
export function upstreamTools(
  command: string[],
  flags: UpstreamFlags,
): { install: InstallTools; label: string } {
  const upstream = upstreamOf(command, flags);
  const install: InstallTools = async (app, logger) => {
    const proxy = await startProxy(app, {
      upstream,
      syncTools: flags.syncTools,
      retryTools: flags.retryTools,
      upstreamTimeoutMs: flags.upstreamTimeout * 1000,
      concurrency: flags.upstreamConcurrency,
      logger,
      version: packageVersion(),
    });
    return { stop: () => proxy.close() };
  };
  return { install, label: `proxy of ${describeUpstream(upstream)}` };
}

function upstreamOf(command: string[], flags: UpstreamFlags): UpstreamSpec {
  const [executable, ...args] = command;
  if (flags.upstream !== undefined && executable !== undefined) {
    throw new TaskrailError('CONFIG', 'give either --upstream URL or -- COMMAND, not both');
  }
  if (flags.upstream !== undefined) return httpUpstream(flags.upstream, flags.upstreamHeader);
  if (executable === undefined) {
    throw new TaskrailError(
      'CONFIG',
      'no upstream: add --upstream http://HOST:PORT/mcp, or -- COMMAND ARGS… for a stdio server',
    );
  }
  if (flags.upstreamHeader.length > 0) {
    throw new TaskrailError(
      'CONFIG',
      '--upstream-header needs --upstream (a stdio child gets the environment)',
    );
  }
  return { kind: 'stdio', command: executable, args };
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function names(value: string, previous: string[]): string[] {
  const list = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (list.length === 0)
    throw new InvalidArgumentError('must be a comma-separated list of tool names');
  return [...previous, ...list];
}

function seconds(value: string): number {
  const parsed = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !Number.isFinite(parsed)) {
    throw new InvalidArgumentError('must be a number of seconds (0 = no deadline)');
  }
  return parsed;
}

function positiveInt(value: string): number {
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || parsed < 1)
    throw new InvalidArgumentError('must be a whole number ≥ 1');
  return parsed;
}
