import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../runtime/api.js';
import type { JsonObject } from '../../task/record.js';
import { HEADER } from '../../protocol/constants.js';

type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;
type DebugLog = NonNullable<Logger['debug']>;

interface Note {
  method?: string;
  tool?: string;
  taskId?: string;
  principal?: string;
}

/** Only as many bytes of an answer are searched for a task id or an error code. */
const SNIFF_BYTES = 16 * 1024;
const TASK_ID = /"taskId"\s*:\s*"([^"]{1,200})"/;
const RPC_ERROR = /"error"\s*:\s*\{\s*"code"\s*:\s*(-?\d+)/;

/**
 * One `debug` line per HTTP request: JSON-RPC method, tool, task id, principal, HTTP status,
 * JSON-RPC error code, duration. Built only when the logger takes debug lines, so a server at
 * `info` pays nothing for it.
 */
export class RequestLog {
  readonly #debug: DebugLog;
  readonly #notes = new WeakMap<IncomingMessage, Note>();

  constructor(debug: DebugLog) {
    this.#debug = debug;
  }

  /** What the body says (called once it is read); cheap enough at debug level only. */
  note(req: IncomingMessage, body: string, principal: string): void {
    const note: Note = { principal };
    try {
      const parsed = JSON.parse(body) as JsonObject;
      const params = (parsed['params'] ?? {}) as JsonObject;
      if (typeof parsed['method'] === 'string') note.method = parsed['method'];
      if (typeof params['name'] === 'string') note.tool = params['name'];
      const args = (params['arguments'] ?? {}) as JsonObject;
      const taskId = params['taskId'] ?? args['taskId'];
      if (typeof taskId === 'string') note.taskId = taskId;
    } catch {
      // A body that is not JSON is answered -32700; the line says so through its status.
    }
    this.#notes.set(req, note);
  }

  wrap(handler: NodeHandler): NodeHandler {
    return (req, res) => {
      const started = process.hrtime.bigint();
      const sniffed = sniff(res);
      res.once('close', () => {
        const note = this.#notes.get(req) ?? {};
        const answer = sniffed();
        const taskId = note.taskId ?? TASK_ID.exec(answer)?.[1];
        const rpcError = RPC_ERROR.exec(answer)?.[1];
        this.#debug('request', {
          method:
            note.method ?? header(req, HEADER.method) ?? `${req.method ?? '?'} ${req.url ?? ''}`,
          ...(note.tool === undefined ? {} : { tool: note.tool }),
          ...(taskId === undefined ? {} : { taskId }),
          ...(note.principal === undefined ? {} : { principal: note.principal }),
          status: res.statusCode,
          ...(rpcError === undefined ? {} : { rpcError: Number(rpcError) }),
          durationMs: Number(process.hrtime.bigint() - started) / 1e6,
        });
      });
      handler(req, res);
    };
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Keeps the first bytes written to the response (JSON or SSE) for the line. */
function sniff(res: ServerResponse): () => string {
  let seen = '';
  const keep = (chunk: unknown): void => {
    if (seen.length >= SNIFF_BYTES || chunk === undefined || chunk === null) return;
    if (typeof chunk === 'string') seen += chunk.slice(0, SNIFF_BYTES);
    else if (chunk instanceof Uint8Array) {
      seen += Buffer.from(chunk.subarray(0, SNIFF_BYTES)).toString('utf8');
    }
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.write = ((...args: unknown[]) => {
    keep(args[0]);
    return write(...args);
  }) as ServerResponse['write'];
  res.end = ((...args: unknown[]) => {
    if (typeof args[0] !== 'function') keep(args[0]);
    return end(...args);
  }) as ServerResponse['end'];
  return () => seen;
}
