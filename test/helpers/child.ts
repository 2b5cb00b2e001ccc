import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface Child {
  process: ChildProcess;
  /** Every stdout line so far. */
  lines: string[];
  stderr: () => string;
  /** Resolves with the first stdout line matching, or rejects at the deadline or on exit. */
  line(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `node script args…` (in `cwd`, default this process's) and follows its output. */
export function startNode(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  cwd?: string,
): Child {
  const child = spawn(process.execPath, [script, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let stderr = '';
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const wake of waiters) wake();
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    process: child,
    lines,
    stderr: () => stderr,
    line(pattern, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          for (const line of lines) {
            const match = line.match(pattern);
            if (match) return finish(() => resolve(match));
          }
          if (child.exitCode !== null || child.signalCode !== null) {
            finish(() =>
              reject(new Error(`process exited before printing ${pattern}; stderr: ${stderr}`)),
            );
          }
        };
        const timer = setTimeout(
          () =>
            finish(() =>
              reject(
                new Error(`no line matching ${pattern} within ${timeoutMs} ms; stderr: ${stderr}`),
              ),
            ),
          timeoutMs,
        );
        const finish = (settle: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          child.off('exit', check);
          settle();
        };
        waiters.add(check);
        child.on('exit', check);
        check();
      });
    },
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
