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
  timeout?: number;
  retry: number;
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
    .option('--upstream-concurrency <n>', 'upstream calls in flight at once', positiveInt, 8)
    .option(
      '--timeout <ms>',
      'limit of one attempt of an upstream tool call made as a task, in ms (or 30s, 2m, 1h); then it is cancelled upstream and its slot freed',
      parseTimeout,
    )
    .option(
      '--retry <n>',
      'make an upstream tool call again, after a backoff, when it fails or times out: at most n more times',
      wholeNumber,
      0,
    );
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
      timeoutMs: flags.timeout,
      retries: flags.retry,
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

const TIMEOUT_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `--timeout`: a bare number is ms (as the tool option `timeoutMs`); or with ms, s, m or h. */
function parseTimeout(value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/i.exec(value.trim());
  const unit = TIMEOUT_UNITS[(match?.[2] ?? 'ms').toLowerCase()];
  const ms = match === null || unit === undefined ? NaN : Math.round(Number(match[1]) * unit);
  if (!(ms >= 1 && ms <= 7 * 24 * 3_600_000)) {
    throw new InvalidArgumentError('must be a time from 1 ms to 7 days: 30000, 30s, 2m or 1h');
  }
  return ms;
}

function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 1000) {
    throw new InvalidArgumentError('must be a whole number from 0 to 1000');
  }
  return Number(value);
}

function positiveInt(value: string): number {
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || parsed < 1)
    throw new InvalidArgumentError('must be a whole number ≥ 1');
  return parsed;
}
