import { InvalidArgumentError, type Command } from 'commander';
import { serveExecutor } from '../executors/serve-executor.js';
import type { Executor } from '../runtime/api.js';
import {
  defaultLogFormat,
  stderrLogger,
  type LogFormat,
  type LogLevel,
} from '../runtime/logger.js';
import { installRejectionGuard } from '../runtime/rejection-guard.js';
import { createTaskServer, type TaskServer } from '../server/app.js';
import type { TaskStore } from '../store/port.js';
import { openStore, storePeers } from '../stores/open.js';
import { missingPeersError } from '../task/peer-dependency.js';
import { packageVersion } from './package-info.js';
import { parseLogFormat, parseLogLevel, parseResultChars } from './options.js';
import { announceToFleet } from './fleet.js';
import { onShutdown, STOP_GRACE_MS, untracked, type StopSteps } from './graceful-stop.js';
import { TaskrailError } from '../task/errors.js';
import { loadToolSet } from './tool-sets.js';
import type { InstallTools } from './serve.js';
import {
  addUpstreamOptions,
  namesUpstream,
  upstreamTools,
  type UpstreamFlags,
} from './upstream-options.js';

interface WorkerOptions extends UpstreamFlags {
  store?: string;
  tools?: string;
  concurrency: number;
  maxResultChars: number;
  logLevel: LogLevel;
  logFormat?: LogFormat;
}

/** What both job engines' executors offer a worker process. */
type WorkerExecutor = Executor & { ready(): Promise<void>; closed(): Promise<void> };

/** After the grace period handlers are aborted; give their runs this long to hand back leases. */
const HAND_BACK_MS = 5_000;

function parseConcurrency(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 10_000) {
    throw new InvalidArgumentError('must be an integer from 1 to 10000');
  }
  return n;
}

export function registerWorker(program: Command): void {
  const command = program
    .command('worker')
    .description(
      'Run tasks for the servers sharing a redis:// store (through BullMQ) or a postgres:// store (through graphile-worker).',
    )
    .usage('--store URL [options] [--upstream URL | -- COMMAND [ARGS…]]')
    .option(
      '--store <url>',
      'redis://HOST:PORT/DB[?prefix=NAME] or postgres://HOST:PORT/DB[?schema=NAME] (default: $TASKRAIL_STORE)',
    )
    .option('--tools <module>', 'tool set: demo (default), conformance, or a module path')
    .option('--concurrency <n>', 'tasks run at once by this process', parseConcurrency, 10)
    .option(
      '--max-result-chars <n>',
      'results with more text are kept whole and stored shortened (give servers the same)',
      parseResultChars,
      40_000,
    )
    .option('--log-level <level>', 'debug, info, warn, error or silent', parseLogLevel, 'info')
    .option(
      '--log-format <format>',
      'text or json (default: text on a terminal, json otherwise)',
      parseLogFormat,
    );
  // For `taskrail proxy --no-worker`: the same upstream flags, and this worker calls it.
  addUpstreamOptions(command).action((args: string[], options: WorkerOptions) =>
    work(options, toolsOf(args, options)),
  );
}

function toolsOf(args: string[], options: WorkerOptions): { install: InstallTools; label: string } {
  if (!namesUpstream(args, options)) {
    const tools = options.tools ?? 'demo';
    return { install: (app) => loadToolSet(tools, app), label: tools };
  }
  if (options.tools !== undefined) {
    throw new TaskrailError(
      'CONFIG',
      'give either --tools or an upstream (--upstream URL or -- COMMAND), not both',
    );
  }
  return upstreamTools(args, options);
}

async function work(
  options: WorkerOptions,
  tools: { install: InstallTools; label: string },
): Promise<void> {
  const logger = stderrLogger(options.logLevel, options.logFormat ?? defaultLogFormat());
  installRejectionGuard(logger);
  const storeUrl = options.store ?? process.env['TASKRAIL_STORE'];
  if (storeUrl === undefined || !/^(rediss?|postgres(ql)?):\/\//.test(storeUrl.trim())) {
    throw new Error(
      'worker needs --store redis://HOST:PORT/DB or postgres://HOST:PORT/DB (or TASKRAIL_STORE set to one)',
    );
  }
  const missing = missingPeersError([storePeers(storeUrl, true)]);
  if (missing !== undefined) throw missing;
  const store = await openStore(storeUrl);
  const executor = (await serveExecutor({
    storeUrl,
    store,
    worker: true,
    concurrency: options.concurrency,
    logger,
  })) as WorkerExecutor;
  const app = createTaskServer({
    store,
    name: 'taskrail',
    version: packageVersion(),
    logger,
    runtime: { executor, logger, maxResultChars: options.maxResultChars },
  });
  let fleet;
  let installed;
  try {
    installed = await tools.install(app, logger);
    fleet = await announceToFleet(storeUrl, 'worker', app, logger);
    app.runtime.start();
    await executor.ready();
  } catch (error) {
    await fleet?.leave();
    await stopAll(app, executor, store, untracked);
    await installed?.stop();
    throw error;
  }
  onShutdown(async (steps) => {
    await Promise.all([
      steps.run('leave the fleet', async () => fleet?.leave()),
      stopAll(app, executor, store, steps),
    ]);
    await steps.run('stop the tools', async () => installed?.stop());
  }, logger);
  process.stdout.write(
    `taskrail worker ready (store: ${store.description}, tools: ${tools.label}, ` +
      `concurrency: ${options.concurrency})\n`,
  );
}

/** Stop fetching, let running tasks finish (or abort them and hand their leases back), close. */
async function stopAll(
  app: TaskServer,
  executor: WorkerExecutor,
  store: TaskStore,
  steps: StopSteps,
): Promise<void> {
  await steps.run('stop running tasks', () => app.close(STOP_GRACE_MS));
  let timer: NodeJS.Timeout | undefined;
  await steps.run('close the job engine', () =>
    Promise.race([
      executor.closed(),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, HAND_BACK_MS);
      }),
    ]),
  );
  clearTimeout(timer);
  await steps.run('close the store', () => store.close());
}
