import { ProtocolError } from '@modelcontextprotocol/server';
import type { WireError } from '../../protocol/index.js';
import type { Logger } from '../../runtime/api.js';
import { RPC, RpcError, TaskrailError, isRpcError } from '../../task/errors.js';
import type { TaskRuntimePort } from './runtime-port.js';

/**
 * What a client sees when the server cannot carry out a request because of its own trouble
 * (store locked, full or unreachable). Fixed on purpose: the cause stays in the log, so no
 * file path, connection string or stack reaches the wire.
 */
export const SERVER_TROUBLE_MESSAGE =
  'The server cannot reach its task store right now; retry the request later';

/** HTTP status of that answer where the status line is still ours to choose. */
export const SERVER_TROUBLE_STATUS = 503;

const TROUBLE_DATA = { retryable: true } as const;

/** The -32603 a request earns when the store failed under it. */
export class ServerTroubleError extends RpcError {
  constructor() {
    super(RPC.INTERNAL_ERROR, SERVER_TROUBLE_MESSAGE, TROUBLE_DATA);
    this.name = 'ServerTroubleError';
  }
}

export function isServerTrouble(error: unknown): error is ServerTroubleError {
  return error instanceof ServerTroubleError;
}

export function troubleWire(): WireError {
  return {
    httpStatus: SERVER_TROUBLE_STATUS,
    error: { code: RPC.INTERNAL_ERROR, message: SERVER_TROUBLE_MESSAGE, data: TROUBLE_DATA },
  };
}

/** The same answer for the SDK, which sends a ProtocolError's code and message as they are. */
export function troubleProtocolError(): ProtocolError {
  const { error } = troubleWire();
  return new ProtocolError(error.code, error.message, error.data);
}

const CALLER_MISTAKES = new Set<string>([
  'INVALID_TRANSITION',
  'TASK_NOT_FOUND',
  'TASK_TERMINAL',
  'CONFLICT',
  'TOO_LARGE',
  'INVALID_ARGUMENT',
  'INPUT_KEY_REUSED',
]);

/**
 * True when an error thrown by the store (through the runtime) is the server's trouble rather
 * than an answer for the caller: `STORE_UNAVAILABLE`, and anything that is neither a wire error
 * (RpcError, the SDK's ProtocolError) nor a TaskrailError (a raw driver error: SQLITE_BUSY, ENOSPC, an ioredis connection error).
 */
export function isStoreTrouble(error: unknown): boolean {
  if (isServerTrouble(error)) return false;
  if (isRpcError(error) || error instanceof ProtocolError) return false;
  // A caller that hung up (its request's signal) is not the store's trouble.
  if (error instanceof Error && error.name === 'AbortError') return false;
  if (error instanceof TaskrailError) return !CALLER_MISTAKES.has(error.code);
  return true;
}

const REPEAT_WINDOW_MS = 30_000;
const MAX_KINDS = 100;

/**
 * Logs the detail of each kind of store trouble once, then at most once per 30 s with a count
 * of the requests that failed the same way meanwhile, so an outage does not flood the log.
 */
export class TroubleReporter {
  readonly #logger: Logger;
  readonly #seen = new Map<string, { loggedAt: number; suppressed: number }>();
  /** Requests answered with store trouble since start (for /metrics and tests). */
  answered = 0;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Logs `error` (deduplicated) and returns the error to answer the request with. */
  report(error: unknown, method: string): ServerTroubleError {
    this.answered += 1;
    const detail = describe(error);
    const now = Date.now();
    const seen = this.#seen.get(detail);
    if (seen !== undefined && now - seen.loggedAt < REPEAT_WINDOW_MS) {
      seen.suppressed += 1;
      return new ServerTroubleError();
    }
    const repeated = seen?.suppressed ?? 0;
    this.#seen.delete(detail);
    this.#seen.set(detail, { loggedAt: now, suppressed: 0 });
    if (this.#seen.size > MAX_KINDS) this.#seen.delete(this.#seen.keys().next().value as string);
    this.#logger.error('store trouble: request answered with a retryable -32603', {
      method,
      error: detail,
      ...(repeated > 0 ? { sameErrorSinceLastLog: repeated } : {}),
    });
    return new ServerTroubleError();
  }

  /** A request the client cancelled or hung up on: its caller's doing, not the store's. */
  clientAborted(method: string): void {
    this.#logger.debug?.('request aborted by the client', { method });
  }

  /** Rethrows `error`, turned into ServerTroubleError (and logged) when it is store trouble. */
  rethrow(error: unknown, method: string): never {
    if (isStoreTrouble(error)) throw this.report(error, method);
    throw error;
  }
}

/** The error and the driver error under it (`cause`): the detail the wire never gets. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const own = `${error.name}${typeof code === 'string' ? ` ${code}` : ''}: ${error.message}`;
  return error.cause === undefined || error.cause === error
    ? own
    : `${own} (${describe(error.cause)})`;
}

/** The runtime face with every store-backed method answering store trouble as ServerTroubleError. */
export function guardedRuntime(face: TaskRuntimePort, reporter: TroubleReporter): TaskRuntimePort {
  const guarded = async <T>(method: string, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      return reporter.rethrow(error, method);
    }
  };
  return {
    createTask: (input) => guarded('create', () => face.createTask(input)),
    getTask: (id, principal) => guarded('tasks/get', () => face.getTask(id, principal)),
    answerInput: (id, principal, responses) =>
      guarded('tasks/update', () => face.answerInput(id, principal, responses)),
    cancelTask: (id, principal) => guarded('tasks/cancel', () => face.cancelTask(id, principal)),
    waitForSettled: (id, principal, options) =>
      guarded('inline wait', () => face.waitForSettled(id, principal, options)),
    // Runs the handler itself: what it throws is the tool's answer, not store trouble.
    runInline: (input) => face.runInline(input),
    start: () => face.start(),
    stop: (graceMs) => face.stop(graceMs),
  };
}

/**
 * Whether a JSON-RPC answer the SDK wrote is the store-trouble -32603. Read from the answer
 * itself rather than tracked through an AsyncLocalStorage scope: on Node 20 one `run()` turns
 * on a hook every promise of the process pays for, the SDK's many included.
 */
export function isTroubleAnswer(text: string): boolean {
  if (!text.includes(SERVER_TROUBLE_MESSAGE)) return false;
  try {
    const message = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    const error = message.error;
    return error?.code === RPC.INTERNAL_ERROR && error.message === SERVER_TROUBLE_MESSAGE;
  } catch {
    return false;
  }
}

/** The HTTP status of an SDK answer: 503 instead of 200 when its JSON is store trouble. */
export function troubleStatus(status: number, text: string): number {
  return status === 200 && isTroubleAnswer(text) ? SERVER_TROUBLE_STATUS : status;
}
