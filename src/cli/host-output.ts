import {
  exitCodeFor,
  isClientError,
  resultText,
  type CallOutcome,
  type ToolCall,
} from '../client/index.js';
import { EXIT_USAGE } from '../client/outcome.js';
import { RPC } from '../task/errors.js';
import type { ProgressLine } from './host-progress.js';

/**
 * SIGINTs closer together than this are one keypress: `npm exec`/`npx` forwards the terminal's
 * SIGINT to its child, which already got its own copy from the terminal.
 */
const SAME_KEYPRESS_MS = 150;

/**
 * One SIGINT listener for the whole command. Node resets SIGINT to its default (terminate) when
 * the last listener goes, and a signal landing between an `off` and the next `on` was seen to
 * kill or vanish; so the listener stays and only its target changes. Interrupts before a target
 * exists are counted and replayed to it.
 */
export class SigintRouter {
  #target: (() => void) | undefined;
  #early = 0;
  #lastAt = Number.NEGATIVE_INFINITY;
  readonly #onEarly: (count: number) => void;
  readonly #listener = (): void => {
    const now = performance.now();
    if (now - this.#lastAt < SAME_KEYPRESS_MS) return;
    this.#lastAt = now;
    if (this.#target !== undefined) this.#target();
    else this.#onEarly(++this.#early);
  };

  constructor(onEarly: (count: number) => void = () => undefined) {
    this.#onEarly = onEarly;
    process.on('SIGINT', this.#listener);
  }

  route(target: () => void): void {
    this.#target = target;
    for (; this.#early > 0; this.#early--) target();
  }

  dispose(): void {
    process.off('SIGINT', this.#listener);
  }
}

/**
 * Waits for a call in the foreground. The first SIGINT sends `tasks/cancel` and keeps waiting
 * until the server reports a terminal status; a second one stops waiting (the task stays in the
 * ledger).
 */
export async function follow(
  call: ToolCall,
  progress: ProgressLine,
  interrupt: AbortController,
  sigint: SigintRouter,
): Promise<CallOutcome> {
  let interrupts = 0;
  sigint.route(() => {
    interrupts += 1;
    if (interrupts === 1) {
      interrupt.abort();
      // The call's `cancel-sent` event says "cancel requested" as the request goes out.
      call.cancel().catch(() => undefined);
      return;
    }
    progress.stop();
    process.stderr.write(
      `stopped waiting; task ${call.taskId ?? ''} keeps running (taskrail tasks wait ${call.taskId ?? ''})\n`,
    );
    call.detach();
    process.exit(EXIT_USAGE);
  });
  try {
    return await call.result();
  } finally {
    progress.stop();
  }
}

/** Prints the end of a call (result on stdout, diagnostics on stderr) and returns the exit code. */
export function printOutcome(outcome: CallOutcome, json: boolean): number {
  const out = (text: string): void =>
    void process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  const err = (text: string): void => void process.stderr.write(`${text}\n`);
  switch (outcome.kind) {
    case 'completed':
    case 'tool_error':
      out(json ? JSON.stringify(outcome.result) : resultText(outcome.result));
      if (outcome.kind === 'tool_error') err('the tool reported an error (isError: true)');
      break;
    case 'invalid_output':
      out(json ? JSON.stringify(outcome.result) : resultText(outcome.result));
      err(`structuredContent does not match the tool's outputSchema: ${outcome.errors.join('; ')}`);
      break;
    case 'failed':
      if (json) out(JSON.stringify({ error: outcome.error }));
      err(
        `failed: error ${outcome.error.code}: ${outcome.error.message}${capabilityHint(outcome.error.code)}`,
      );
      break;
    case 'cancelled':
      err(`cancelled${outcome.statusMessage === undefined ? '' : `: ${outcome.statusMessage}`}`);
      break;
    case 'lost':
      err(
        `task ${outcome.taskId} is lost: the server no longer knows it (${outcome.error.message})`,
      );
      break;
    case 'rejected':
      err(
        `arguments rejected by the tool's inputSchema (nothing was sent):\n  ${outcome.errors.join('\n  ')}`,
      );
      break;
  }
  return exitCodeFor(outcome);
}

function capabilityHint(code: number): string {
  return code === RPC.MISSING_REQUIRED_CLIENT_CAPABILITY
    ? ' (this tool only runs as a task; drop --no-tasks / TASKRAIL_DISABLE_TASKS)'
    : '';
}

/** Library errors as the CLI reports them: one line on stderr, exit 4. */
export function reportError(error: unknown): number {
  const message = error instanceof Error ? error.message : String(error);
  const prefix = isClientError(error, 'INPUT_UNAVAILABLE') ? 'input needed' : 'error';
  process.stderr.write(`taskrail: ${prefix}: ${message}\n`);
  return EXIT_USAGE;
}

/** `--args JSON` / `--args-file FILE` → an object, or a usage error. */
export function parseArguments(text: string | undefined, source: string): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${source} is not valid JSON: ${(error as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(`${source} must be a JSON object`);
  }
  return value as Record<string, unknown>;
}
