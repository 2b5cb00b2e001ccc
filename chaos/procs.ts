/** Child processes of the chaos run: servers, workers and clients, killed and restarted at will. */
import { startNode, type Child } from '../test/helpers/child.js';
import { startServing, startWorker, type TaskrailOptions } from '../test/helpers/taskrail.js';

// The compiled sources the tools module imports too, so `instanceof RpcError` holds.
export const MAIN = '.build/src/cli/main.js';
export const TOOLS = '.build/chaos/tools.js';
export const CLIENT = '.build/chaos/client.js';

/** What the rejection guard logs for a promise nobody handled: counted, never expected. */
const UNHANDLED = 'unhandled promise rejection';
export const tally = { unhandledRejections: 0 };

/** A chaos child: test/helpers/child.ts's, killed and restarted at will. */
export type Proc = Child;

/** What every chaos child shares: no stdin, a short stderr tail, its unhandled rejections counted. */
function chaosOptions(name: string): TaskrailOptions {
  return {
    stdin: 'ignore',
    stderrLimit: 4000,
    onStderrLine: (line) => {
      if (!line.includes(UNHANDLED)) return;
      tally.unhandledRejections += 1;
      process.stderr.write(`chaos: UNHANDLED REJECTION in ${name}: ${line}\n`);
    },
  };
}

/** Starts `node args…` (behind `wrapper`, e.g. `faketime -f +30s`, when given). */
export function start(args: string[], env: NodeJS.ProcessEnv = {}, wrapper: string[] = []): Proc {
  const [script, ...rest] = args as [string, ...string[]];
  return startNode(script, rest, env, { ...chaosOptions(args.slice(0, 2).join(' ')), wrapper });
}

const COMMON = ['--tools', TOOLS, '--log-level', 'error'];
const READY_MS = 60_000;

/** `taskrail serve` on `store`; resolves with the process and its port once it answers. */
export async function serve(
  store: string,
  extra: string[] = [],
): Promise<{ proc: Proc; port: number }> {
  const args = ['serve', '--port', '0', '--store', store, ...COMMON, ...extra];
  const options = { ...chaosOptions(`${MAIN} serve`), main: MAIN, timeoutMs: READY_MS };
  const { url, child } = await startServing(args, options);
  return { proc: child, port: Number(new URL(url).port) };
}

/** `taskrail worker` on `store` (behind `wrapper` when given), once it is ready. */
export function worker(store: string, wrapper: string[] = []): Promise<Proc> {
  const args = ['--store', store, ...COMMON, '--concurrency', '8'];
  const options = { ...chaosOptions(`${MAIN} worker`), main: MAIN, timeoutMs: READY_MS };
  return startWorker(args, { ...options, wrapper });
}
