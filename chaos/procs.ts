/** Child processes of the chaos run: servers, workers and clients, killed and restarted at will. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

// The compiled sources the tools module imports too, so `instanceof RpcError` holds.
export const MAIN = '.build/src/cli/main.js';
export const TOOLS = '.build/chaos/tools.js';
export const CLIENT = '.build/chaos/client.js';

/** What the rejection guard logs for a promise nobody handled: counted, never expected. */
const UNHANDLED = 'unhandled promise rejection';
export const tally = { unhandledRejections: 0 };

export interface Proc {
  child: ChildProcess;
  lines: string[];
  exited: Promise<void>;
  /** Resolves with the first stdout match (rejects on exit or after 60 s). */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `node args…` (behind `wrapper`, e.g. `faketime -f +30s`, when given). */
export function start(args: string[], env: NodeJS.ProcessEnv = {}, wrapper: string[] = []): Proc {
  const [command, ...rest] = [...wrapper, process.execPath, ...args] as [string, ...string[]];
  const child = spawn(command, rest, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  createInterface({ input: child.stderr! }).on('line', (line) => {
    if (!line.includes(UNHANDLED)) return;
    tally.unhandledRejections += 1;
    process.stderr.write(`chaos: UNHANDLED REJECTION in ${args.slice(0, 2).join(' ')}: ${line}\n`);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const wake of waiters) wake();
  });
  return {
    child,
    lines,
    exited,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`no ${pattern}: ${stderr}`)), 60_000);
        const check = () => {
          const match = lines.map((line) => pattern.exec(line)).find((m) => m !== null);
          if (match) done(undefined, match);
        };
        const done = (error?: Error, match?: RegExpMatchArray) => {
          clearTimeout(timer);
          waiters.delete(check);
          if (match) resolve(match);
          else reject(error);
        };
        void exited.then(() => done(new Error(`${args.join(' ')} exited: ${stderr}`)));
        waiters.add(check);
        check();
      }),
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** `taskrail serve` on `store`; resolves with the process and its port once it answers. */
export async function serve(
  store: string,
  extra: string[] = [],
): Promise<{ proc: Proc; port: number }> {
  const proc = start([
    MAIN,
    'serve',
    '--port',
    '0',
    '--store',
    store,
    '--tools',
    TOOLS,
    '--log-level',
    'error',
    ...extra,
  ]);
  const match = await proc.waitFor(/http:\/\/127\.0\.0\.1:(\d+)\/mcp/);
  return { proc, port: Number(match[1]) };
}

export async function worker(store: string, wrapper: string[] = []): Promise<Proc> {
  const proc = start(
    [
      MAIN,
      'worker',
      '--store',
      store,
      '--tools',
      TOOLS,
      '--concurrency',
      '8',
      '--log-level',
      'error',
    ],
    {},
    wrapper,
  );
  await proc.waitFor(/ready/);
  return proc;
}
