/**
 * The one way the tests, benchmarks and chaos run start taskrail as its own process: `serve`
 * and `proxy` are ready once they print `taskrail serving URL`, a `worker` once it prints that
 * it is ready. Both are children of test/helpers/child.ts.
 */
import { startNode, type Child, type StartOptions } from './child.js';

/** The CLI the process tests run: the built package, or the build TASKRAIL_E2E_MAIN names. */
export const MAIN = process.env['TASKRAIL_E2E_MAIN'] ?? 'dist/cli/main.js';

export interface TaskrailOptions extends StartOptions {
  /** The CLI entry to run; default MAIN. */
  main?: string;
  env?: NodeJS.ProcessEnv;
  /** How long it may take to say it is ready; default 30 s. */
  timeoutMs?: number;
}

export interface Serving {
  /** The MCP endpoint it printed. */
  url: string;
  child: Child;
}

const SERVING = /^taskrail serving (\S+)/;
const WORKER_READY = /^taskrail worker ready/;

async function ready(child: Child, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  try {
    return await child.line(pattern, timeoutMs);
  } catch (error) {
    await child.kill('SIGKILL');
    throw error;
  }
}

/** `taskrail serve …` or `taskrail proxy …`, once it serves (it is killed if it never does). */
export async function startServing(
  args: string[],
  options: TaskrailOptions = {},
): Promise<Serving> {
  const child = startNode(options.main ?? MAIN, args, options.env, options);
  const [, url] = await ready(child, SERVING, options.timeoutMs ?? 30_000);
  return { url: url as string, child };
}

/** `taskrail worker …`, once it is ready (it is killed if it never is). */
export async function startWorker(args: string[], options: TaskrailOptions = {}): Promise<Child> {
  const child = startNode(options.main ?? MAIN, ['worker', ...args], options.env, options);
  await ready(child, WORKER_READY, options.timeoutMs ?? 30_000);
  return child;
}
