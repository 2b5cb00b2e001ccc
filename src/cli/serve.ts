import type { Command } from 'commander';
import type { Logger } from '../runtime/api.js';
import { serveExecutor } from '../executors/serve-executor.js';
import {
  defaultLogFormat,
  stderrLogger,
  type LogLevel,
  type LogFormat,
} from '../runtime/logger.js';
import { installRejectionGuard } from '../runtime/rejection-guard.js';
import { DEFAULT_MAX_QUEUED_PER_PRINCIPAL } from '../runtime/queue-cap.js';
import {
  createTaskServer,
  DEFAULT_LISTEN_OPTIONS,
  DEFAULT_MAX_READ_CHARS,
  HTTP_DEFAULTS,
  type TaskServer,
} from '../server/app.js';
import type { ExtraGauge } from '../server/admin/index.js';
import { SESSION_DEFAULTS } from '../server/wire-2025/sessions.js';
import { serveTaskServerStdio } from '../server/stdio.js';
import { DEFAULT_STORE_URL, openStore, storePeers } from '../stores/open.js';
import { METRICS_PEERS } from '../server/admin/peers.js';
import { missingPeersError, peerInstalled } from '../task/peer-dependency.js';
import { packageVersion } from './package-info.js';
import {
  parseCount,
  parseDuration,
  parseLogFormat,
  parseLogLevel,
  parseMinutes,
  parsePort,
  parseSeconds,
  parseSize,
  parseReadChars,
  parseResultChars,
} from './options.js';
import { addAuthOptions, resolveAuth, type AuthFlags } from './serve-auth.js';
import { announceToFleet } from './fleet.js';
import { onShutdown, STOP_GRACE_MS, untracked, type StopSteps } from './graceful-stop.js';
import { loadToolSet } from './tool-sets.js';
import { watchWorkers, type WorkerWatch } from './worker-watch.js';

export interface ServeOptions extends AuthFlags {
  host: string;
  port: number;
  store?: string;
  tools?: string;
  worker: boolean;
  maxBody?: number;
  logLevel: LogLevel;
  logFormat?: LogFormat;
  stdio?: boolean;
  fallbackTools?: boolean;
  maxConnections?: number;
  maxConnectionsPerAddress?: number;
  headersTimeout?: number;
  requestTimeout?: number;
  keepAliveTimeout?: number;
  maxSessions?: number;
  maxSessionsPerCaller?: number;
  sessionIdle?: number;
  maxWaitingResults?: number;
  maxStreams?: number;
  inlineWait?: number;
  concurrency?: number;
  maxQueuedPerPrincipal?: number;
  maxResultChars: number;
  maxReadChars: number;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

/**
 * Adds the tools before the server listens (serve: a tool set; proxy: an upstream's tools);
 * the returned stop runs before the server stops.
 */
export type InstallTools = (
  app: TaskServer,
  logger: Logger,
) => Promise<{ stop(): Promise<void> } | void>;

export function registerServe(program: Command): void {
  addServeOptions(
    program
      .command('serve')
      .description(
        'Serve MCP over Streamable HTTP at http://HOST:PORT/mcp, running tools as durable tasks.',
      ),
  )
    .option('--tools <module>', 'tool set: demo, conformance, or a module path', 'demo')
    .action((options: ServeOptions & { tools: string }) =>
      serve(options, (app) => loadToolSet(options.tools, app), options.tools),
    );
}

/** The options `serve` and `proxy` share, including `--auth`/`--admin` and their OAuth flags. */
export function addServeOptions(command: Command): Command {
  command
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--port <port>', 'port (0 picks a free one)', parsePort, 3000)
    .option('--store <url>', `task store URL (default: $TASKRAIL_STORE or ${DEFAULT_STORE_URL})`)
    .option(
      '--no-worker',
      'do not run tasks here; leave them to `taskrail worker` (redis or postgres only)',
    )
    .option(
      '--max-body <size>',
      'largest request body (default 4mb); a body of more values than any request needs is refused (413) before it is parsed',
      parseSize,
    )
    .option('--log-level <level>', 'debug, info, warn, error or silent', parseLogLevel, 'info')
    .option(
      '--log-format <format>',
      'text or json (default: text on a terminal, json otherwise)',
      parseLogFormat,
    )
    .option('--stdio', 'speak MCP over standard input/output instead of HTTP')
    .option(
      '--fallback-tools',
      'for hosts without tasks: past the inline wait a task id instead of a time-out, and task_* tools to them (on by default); given explicitly, required tools answer them too instead of -32021',
    )
    .option(
      '--no-fallback-tools',
      'no task_* tools: a host without tasks waits for the result (or its own time-out), and task-required tools refuse it',
    )
    .option(
      '--inline-wait <duration>',
      "how long a call from a host without tasks waits for its result (e.g. 45s, 1500ms; default 45s, or less than a known host's time-out)",
      parseDuration,
    )
    .option(
      '--concurrency <n>',
      'tasks this serve runs at once when it runs tasks itself (default 16; 10 on redis:// or postgres://)',
      parseCount,
    )
    .option(
      '--max-queued-per-principal <n>',
      `refuse (HTTP 429) a create that would give one caller more unfinished tasks (default ${DEFAULT_MAX_QUEUED_PER_PRINCIPAL})`,
      parseCount,
    )
    .option(
      '--max-result-chars <n>',
      'results with more text are kept whole and handed out shortened, with a link to read the rest',
      parseResultChars,
      40_000,
    )
    .option(
      '--max-read-chars <n>',
      'the most characters one resources/read returns; a read without ?offset=&length= returns the whole text up to it',
      parseReadChars,
      DEFAULT_MAX_READ_CHARS,
    )
    .option(
      '--max-connections <n>',
      `open sockets at most; one caller's busy ones at most half; above 80% idle ones are closed (default ${HTTP_DEFAULTS.maxConnections})`,
      parseCount,
    )
    .option(
      '--max-connections-per-address <n>',
      'open sockets at most from one remote address; raise it behind a reverse proxy (default half of --max-connections)',
      parseCount,
    )
    .option(
      '--headers-timeout <seconds>',
      `time a client has to send its request headers (default ${HTTP_DEFAULTS.headersTimeoutMs / 1000})`,
      parseSeconds,
    )
    .option(
      '--request-timeout <seconds>',
      `time a client has to send a whole request; responses and streams are not limited (default ${HTTP_DEFAULTS.requestTimeoutMs / 1000})`,
      parseSeconds,
    )
    .option(
      '--keep-alive-timeout <seconds>',
      `close an idle keep-alive socket after this long (default ${HTTP_DEFAULTS.keepAliveTimeoutMs / 1000})`,
      parseSeconds,
    )
    .option(
      '--max-sessions <n>',
      `2025-11-25 sessions open at most; the oldest idle one is closed to make room (default ${SESSION_DEFAULTS.maxSessions})`,
      parseCount,
    )
    .option(
      '--max-sessions-per-caller <n>',
      `2025-11-25 sessions open at most per principal (default ${SESSION_DEFAULTS.maxSessionsPerPrincipal})`,
      parseCount,
    )
    .option(
      '--session-idle <minutes>',
      `close a 2025-11-25 session after this long without a request; pings do not count (default ${SESSION_DEFAULTS.idleMs / 60_000})`,
      parseMinutes,
    )
    .option(
      '--max-waiting-results <n>',
      `2025-11-25 tasks/result requests waiting at once; one caller holds at most half (default ${SESSION_DEFAULTS.maxWaitingResults})`,
      parseCount,
    )
    .option(
      '--max-streams <n>',
      `task streams (subscriptions/listen) open at once; one caller holds at most half (default ${DEFAULT_LISTEN_OPTIONS.maxSubscriptions})`,
      parseCount,
    );
  return addAuthOptions(command);
}

export async function serve(
  options: ServeOptions,
  install: InstallTools,
  toolsLabel: string,
): Promise<void> {
  const logger = stderrLogger(options.logLevel, options.logFormat ?? defaultLogFormat());
  installRejectionGuard(logger);
  const storeUrl = options.store ?? process.env['TASKRAIL_STORE'] ?? DEFAULT_STORE_URL;
  if (!options.worker && !/^(rediss?|postgres(ql)?):\/\//.test(storeUrl.trim())) {
    throw new Error(
      '--no-worker needs a redis:// or postgres:// store (a local store has no other process to run tasks)',
    );
  }
  // prom-client is for /metrics only: without it the dashboard works, and /metrics says what to install.
  const missing = missingPeersError([storePeers(storeUrl, true)]);
  if (missing !== undefined) throw missing;
  const auth = await resolveAuth(options);
  const store = await openStore(storeUrl);
  // A redis store runs tasks through BullMQ; under --no-worker this replica only enqueues them.
  const executor = await serveExecutor({
    storeUrl,
    store,
    worker: options.worker,
    logger,
    ...defined({ concurrency: options.concurrency }),
  });
  let workers: WorkerWatch | undefined;
  const gauges = options.worker
    ? fairQueueGauges(() => app.runtime.queueDepths())
    : [workersGauge(() => workers)];
  const app = createTaskServer({
    store,
    name: 'taskrail',
    version: packageVersion(),
    ...defined({ maxBodyBytes: options.maxBody }),
    logger,
    ...auth,
    ...(auth.admin === undefined ? {} : { admin: { ...auth.admin, gauges } }),
    runtime: {
      executor,
      logger,
      ...defined({
        concurrency: options.concurrency,
        maxQueuedPerPrincipal: options.maxQueuedPerPrincipal,
      }),
      maxResultChars: options.maxResultChars,
    },
    maxResultChars: options.maxResultChars,
    maxReadChars: options.maxReadChars,
    fallbackTools: options.fallbackTools !== false,
    // Only an explicit --fallback-tools serves required tools to hosts without tasks: by
    // default they get -32021, as the tasks spec says they MUST.
    fallbackRequiredTools: options.fallbackTools === true,
    http: defined({
      maxConnections: options.maxConnections,
      maxConnectionsPerAddress: options.maxConnectionsPerAddress,
      headersTimeoutMs: options.headersTimeout,
      requestTimeoutMs: options.requestTimeout,
      keepAliveTimeoutMs: options.keepAliveTimeout,
    }),
    wire2025Sessions: defined({
      maxSessions: options.maxSessions,
      maxSessionsPerPrincipal: options.maxSessionsPerCaller,
      idleMs: options.sessionIdle,
      maxWaitingResults: options.maxWaitingResults,
    }),
    listen: defined({ maxSubscriptions: options.maxStreams }),
    ...defined({ inlineWaitMs: options.inlineWait }),
  });
  let fleet;
  let installed;
  try {
    installed = await install(app, logger);
    fleet = await announceToFleet(storeUrl, 'serve', app, logger);
    if (!options.worker && fleet !== undefined) workers = watchWorkers(fleet, logger);
    // Set up the job engine before the first request (on Postgres: the enqueue trigger).
    if (executor !== 'local' && app.tools.hasTaskTools()) await executor.ready?.();
  } catch (error) {
    workers?.stop();
    await installed?.stop();
    await store.close();
    throw error;
  }
  const stop = async (steps: StopSteps): Promise<void> => {
    workers?.stop();
    await Promise.all([
      steps.run('leave the fleet', async () => fleet?.leave()),
      steps.run('stop serving and running tasks', () => app.close(STOP_GRACE_MS)),
    ]);
    await steps.run('stop the tools', async () => installed?.stop());
    await steps.run('close the store', () => store.close());
  };
  if (options.stdio === true) return serveOverStdio(app, stop, logger);
  await serveOverHttp(
    app,
    { ...options, tools: toolsLabel },
    auth.auth !== undefined,
    stop,
    logger,
  );
}

/** The given settings only (exactOptionalPropertyTypes-safe): the library fills in defaults. */
function defined<T extends object>(values: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

/** Fair share's local queue, without principal names: how many wait, and the longest line. */
function fairQueueGauges(depths: () => number[]): ExtraGauge[] {
  return [
    {
      name: 'taskrail_fair_queue_principals_waiting',
      help: 'Principals with tasks waiting for a slot of this serve (fair share queue).',
      value: () => depths().length,
    },
    {
      name: 'taskrail_fair_queue_max_depth',
      help: 'The most tasks one principal has waiting for a slot of this serve (the longest backlog).',
      value: () => depths().reduce((most, depth) => Math.max(most, depth), 0),
    },
  ];
}

function workersGauge(watch: () => WorkerWatch | undefined): ExtraGauge {
  return {
    name: 'taskrail_workers_alive',
    help: 'Live `taskrail worker` processes on this store (serve --no-worker only).',
    value: () => watch()?.alive,
  };
}

async function serveOverHttp(
  app: TaskServer,
  options: ServeOptions,
  authed: boolean,
  stop: (steps: StopSteps) => Promise<void>,
  logger: Logger,
): Promise<void> {
  let info;
  try {
    info = await app.listen(options.port, options.host);
  } catch (error) {
    // Stop the runtime (recovery scan, executor) before the store it reads, so the listen error
    // is what the user sees, not a later "store is closed" from work still in flight.
    await stop(untracked).catch(() => app.store.close().catch(() => undefined));
    throw new Error(
      `cannot listen on ${options.host}:${options.port}: ${(error as Error).message}`,
    );
  }
  if (!authed && !LOOPBACK.has(options.host)) {
    process.stderr.write(
      'taskrail: warning: no --auth; every caller is the anonymous principal and shares its tasks\n',
    );
  }
  if (
    options.auth?.kind === 'oauth' &&
    options.resource === undefined &&
    !LOOPBACK.has(options.host)
  ) {
    process.stderr.write(
      `taskrail: warning: no --resource; tokens must name ${info.url} in "aud" (give the public URL)\n`,
    );
  }
  onShutdown(stop, logger);
  const operators = options.admin === undefined ? '' : `, ${adminPages(info.url)}`;
  process.stdout.write(
    `taskrail serving ${info.url} (store: ${app.store.description}, tools: ${options.tools}${operators})\n`,
  );
}

/** Where operators look: the dashboard, and the metrics (or why there are none). */
function adminPages(mcpUrl: string): string {
  const origin = new URL(mcpUrl).origin;
  const metrics = METRICS_PEERS.packages.every(peerInstalled)
    ? `${origin}/metrics`
    : 'no /metrics until prom-client is installed: npm install prom-client';
  return `dashboard: ${origin}/dashboard, ${metrics}`;
}

function serveOverStdio(
  app: TaskServer,
  stop: (steps: StopSteps) => Promise<void>,
  logger: Logger,
): void {
  const handle = serveTaskServerStdio(app);
  const stopAll = onShutdown(async (steps) => {
    await steps.run('close standard input/output', () => handle.close());
    await stop(steps);
  }, logger);
  process.stdin.once('end', () => void stopAll());
}
