import type { Command } from 'commander';
import { serveExecutor } from '../executors/serve-executor.js';
import { stderrLogger, type LogLevel } from '../runtime/logger.js';
import { installRejectionGuard } from '../runtime/rejection-guard.js';
import { createTaskServer, type TaskServer } from '../server/app.js';
import { serveTaskServerStdio } from '../server/stdio.js';
import type { TaskStore } from '../store/port.js';
import { DEFAULT_STORE_URL, openStore } from '../stores/open.js';
import { packageVersion } from './package-info.js';
import { parseLogLevel, parsePort, parseSize } from './options.js';
import { addAuthOptions, resolveAuth, type AuthFlags } from './serve-auth.js';
import { announceToFleet } from './fleet.js';
import { loadToolSet } from './tool-sets.js';

interface ServeOptions extends AuthFlags {
  host: string;
  port: number;
  store?: string;
  tools: string;
  worker: boolean;
  maxBody: number;
  logLevel: LogLevel;
  stdio?: boolean;
  fallbackTools?: boolean;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);
const STOP_GRACE_MS = 10_000;

export function registerServe(program: Command): void {
  const command = program
    .command('serve')
    .description(
      'Serve MCP over Streamable HTTP at http://HOST:PORT/mcp, running tools as durable tasks.',
    )
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--port <port>', 'port (0 picks a free one)', parsePort, 3000)
    .option('--store <url>', `task store URL (default: $TASKRAIL_STORE or ${DEFAULT_STORE_URL})`)
    .option('--tools <module>', 'tool set: demo, conformance, or a module path', 'demo')
    .option(
      '--no-worker',
      'do not run tasks here; leave them to `taskrail worker` (redis or postgres only)',
    )
    .option('--max-body <size>', 'largest request body', parseSize, 4 * 1024 * 1024)
    .option('--log-level <level>', 'debug, info, warn, error or silent', parseLogLevel, 'info')
    .option('--stdio', 'speak MCP over standard input/output instead of HTTP')
    .option(
      '--fallback-tools',
      'for hosts without tasks: required tools answer with a task id; adds task_status, task_result, task_cancel',
    )
    .action((options: ServeOptions) => serve(options));
  addAuthOptions(command);
}

async function serve(options: ServeOptions): Promise<void> {
  const logger = stderrLogger(options.logLevel);
  installRejectionGuard(logger);
  const storeUrl = options.store ?? process.env['TASKRAIL_STORE'] ?? DEFAULT_STORE_URL;
  if (!options.worker && !/^(rediss?|postgres(ql)?):\/\//.test(storeUrl.trim())) {
    throw new Error(
      '--no-worker needs a redis:// or postgres:// store (a local store has no other process to run tasks)',
    );
  }
  const auth = await resolveAuth(options);
  const store = await openStore(storeUrl);
  // A redis store runs tasks through BullMQ; under --no-worker this replica only enqueues them.
  const executor = await serveExecutor({ storeUrl, store, worker: options.worker, logger });
  const app = createTaskServer({
    store,
    name: 'taskrail',
    version: packageVersion(),
    maxBodyBytes: options.maxBody,
    logger,
    ...auth,
    runtime: { executor, logger },
    fallbackTools: options.fallbackTools === true,
  });
  let fleet;
  try {
    await loadToolSet(options.tools, app);
    fleet = await announceToFleet(storeUrl, 'serve', app, logger);
  } catch (error) {
    await store.close();
    throw error;
  }
  const stopApp = async (): Promise<void> => {
    await fleet?.leave();
    await app.close(STOP_GRACE_MS);
  };
  if (options.stdio === true) return serveOverStdio(app, store, stopApp);
  await serveOverHttp(app, store, options, auth.auth !== undefined, stopApp);
}

async function serveOverHttp(
  app: TaskServer,
  store: TaskStore,
  options: ServeOptions,
  authed: boolean,
  stopApp: () => Promise<void>,
): Promise<void> {
  let info;
  try {
    info = await app.listen(options.port, options.host);
  } catch (error) {
    // Stop the runtime (recovery scan, executor) before the store it reads, so the listen error
    // is what the user sees, not a later "store is closed" from work still in flight.
    await stopApp().catch(() => undefined);
    await store.close();
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
  onShutdown(stopApp, store);
  process.stdout.write(
    `taskrail serving ${info.url} (store: ${store.description}, tools: ${options.tools})\n`,
  );
}

function serveOverStdio(app: TaskServer, store: TaskStore, stopApp: () => Promise<void>): void {
  const handle = serveTaskServerStdio(app);
  const stop = onShutdown(async () => {
    await handle.close();
    await stopApp();
  }, store);
  process.stdin.once('end', () => void stop());
}

/** SIGINT/SIGTERM: stop taking work, hand back or finish running tasks, close the store, exit 0. */
function onShutdown(stopServer: () => Promise<void>, store: TaskStore): () => Promise<void> {
  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    try {
      await stopServer();
      await store.close();
      process.exit(0);
    } catch (error) {
      process.stderr.write(`taskrail: error while stopping: ${(error as Error).message}\n`);
      process.exit(1);
    }
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  return stop;
}
