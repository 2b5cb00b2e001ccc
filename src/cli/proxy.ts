import { InvalidArgumentError, type Command } from 'commander';
import { describeUpstream, httpUpstream, startProxy, type UpstreamSpec } from '../proxy/index.js';
import { TaskrailError } from '../task/errors.js';
import { packageVersion } from './package-info.js';
import { addServeOptions, serve, type ServeOptions } from './serve.js';

interface ProxyCliOptions extends ServeOptions {
  upstream?: string;
  upstreamHeader: string[];
  syncTools: string[];
  retryTools: string[];
  upstreamTimeout: number;
  upstreamConcurrency: number;
}

export function registerProxy(program: Command): void {
  addServeOptions(
    program
      .command('proxy')
      .description(
        'Serve the tools of an existing MCP server (--upstream URL, or -- COMMAND ARGS… on stdio) as durable tasks.',
      )
      .usage(
        '[serve options] (--upstream URL [--upstream-header "Name: value"]… | -- COMMAND [ARGS…])',
      ),
  )
    .argument('[command...]', 'after --: the command of a stdio MCP server, started by the proxy')
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
    .action((command: string[], options: ProxyCliOptions) => runProxy(command, options));
}

async function runProxy(command: string[], options: ProxyCliOptions): Promise<void> {
  const upstream = upstreamOf(command, options);
  if (!options.worker) {
    throw new TaskrailError(
      'CONFIG',
      'proxy runs the upstream calls itself; drop --no-worker (taskrail worker cannot reach the upstream)',
    );
  }
  await serve(
    options,
    async (app, logger) => {
      const proxy = await startProxy(app, {
        upstream,
        syncTools: options.syncTools,
        retryTools: options.retryTools,
        upstreamTimeoutMs: options.upstreamTimeout * 1000,
        concurrency: options.upstreamConcurrency,
        logger,
        version: packageVersion(),
      });
      return { stop: () => proxy.close() };
    },
    `proxy of ${describeUpstream(upstream)}`,
  );
}

function upstreamOf(command: string[], options: ProxyCliOptions): UpstreamSpec {
  const [executable, ...args] = command;
  if (options.upstream !== undefined && executable !== undefined) {
    throw new TaskrailError('CONFIG', 'give either --upstream URL or -- COMMAND, not both');
  }
  if (options.upstream !== undefined) return httpUpstream(options.upstream, options.upstreamHeader);
  if (executable === undefined) {
    throw new TaskrailError(
      'CONFIG',
      'no upstream: add --upstream http://HOST:PORT/mcp, or -- COMMAND ARGS… for a stdio server',
    );
  }
  if (options.upstreamHeader.length > 0) {
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
