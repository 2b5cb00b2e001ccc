/**
 * The one way the tests, benchmarks and chaos run follow a child process: start `node …`, read
 * its lines, wait for one, stop it. `runNode` runs one to completion instead.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface StartOptions {
  cwd?: string;
  /** The child's stdin: a pipe the test may write to (the default), or none. */
  stdin?: 'pipe' | 'ignore';
  /** Runs node behind this command (e.g. `env LD_PRELOAD=… FAKETIME=…`). */
  wrapper?: string[];
  /** Keeps only the last this many characters of stderr (a long run's logs). */
  stderrLimit?: number;
  /** Sees each stderr line as it comes. */
  onStderrLine?: (line: string) => void;
}

export interface Child {
  process: ChildProcess;
  /** Every stdout line so far. */
  lines: string[];
  stderr: () => string;
  /** Resolves once the process has exited. */
  exited: Promise<void>;
  /**
   * Resolves with the first line of `stream` matching (lines already read count), or rejects
   * at the deadline or once the process has exited and the stream ended without one.
   */
  line(
    pattern: RegExp,
    timeoutMs?: number,
    stream?: 'stdout' | 'stderr',
  ): Promise<RegExpMatchArray>;
  kill(signal?: NodeJS.Signals): Promise<void>;
  /**
   * SIGTERM, then SIGKILL if it has not exited `graceMs` later, as an operator's supervisor
   * would: a teardown never hangs on one process.
   */
  stop(graceMs?: number): Promise<void>;
}

function matchIn(lines: readonly string[], pattern: RegExp): RegExpMatchArray | undefined {
  for (const line of lines) {
    const match = line.match(pattern);
    if (match) return match;
  }
  return undefined;
}

/** Starts `node script args…` and follows its output. */
export function startNode(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  options: StartOptions = {},
): Child {
  const [command, ...rest] = [...(options.wrapper ?? []), process.execPath, script, ...args] as [
    string,
    ...string[],
  ];
  const child = spawn(command, rest, {
    cwd: options.cwd,
    env: { ...process.env, ...env },
    stdio: [options.stdin ?? 'pipe', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let stderr = '';
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const waiter of waiters) waiter();
  };
  // A line may still be in the pipe when the process exits: a waiter gives up only once the
  // stream it reads has ended too.
  const ended = { stdout: false, stderr: false };
  createInterface({ input: child.stdout! })
    .on('line', (line) => {
      lines.push(line);
      wake();
    })
    .on('close', () => {
      ended.stdout = true;
      wake();
    });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (options.stderrLimit !== undefined) stderr = stderr.slice(-options.stderrLimit);
    wake();
  });
  child.stderr!.on('end', () => {
    ended.stderr = true;
    wake();
  });
  const onStderrLine = options.onStderrLine;
  if (onStderrLine !== undefined)
    createInterface({ input: child.stderr! }).on('line', onStderrLine);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const hasExited = (): boolean => child.exitCode !== null || child.signalCode !== null;
  const kill = async (signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
    if (!hasExited()) child.kill(signal);
    await exited;
  };
  return {
    process: child,
    lines,
    stderr: () => stderr,
    exited,
    line(pattern, timeoutMs = 15_000, stream = 'stdout') {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = matchIn(stream === 'stdout' ? lines : stderr.split('\n'), pattern);
          if (match) return finish(() => resolve(match));
          if (hasExited() && ended[stream]) {
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
    kill,
    async stop(graceMs = 20_000) {
      const timer = setTimeout(() => {
        process.stderr.write(`process ${child.pid} did not stop on SIGTERM; killing it\n`);
        void kill('SIGKILL');
      }, graceMs);
      await kill('SIGTERM');
      clearTimeout(timer);
    },
  };
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node script args…` to its end with stdin closed (not a terminal). `closeStdout`: the
 * reader closes stdout at once, as `… | head -0` would.
 */
export function runNode(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  options: { closeStdout?: boolean } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    if (options.closeStdout === true) child.stdout.destroy();
    else child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
