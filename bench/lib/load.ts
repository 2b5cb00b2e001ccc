/**
 * A raw-socket HTTP/1.1 load generator: N keep-alive connections (node:net), one request in
 * flight per connection (no pipelining), the request bytes built once. It parses only what it
 * must (status line, Content-Length or chunked framing), so it stays far cheaper per request
 * than any server it drives; `drive` reports its own CPU beside the server's so a reader can
 * check which side was the bottleneck.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import type { Call } from './http.js';

const HEADER_END = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');
/** In every JSON-RPC success, whether a JSON body or the `data:` line of an SSE frame. */
const RESULT = Buffer.from('"result":');

/** The exact bytes of one keep-alive POST of `call` to `url`. */
export function rawRequest(url: string, call: Call): Buffer {
  const target = new URL(url);
  const body = Buffer.from(call.body);
  const lines = [`POST ${target.pathname}${target.search} HTTP/1.1`, `host: ${target.host}`];
  for (const [name, value] of Object.entries(call.headers)) lines.push(`${name}: ${value}`);
  lines.push(`content-length: ${body.length}`, 'connection: keep-alive', '', '');
  return Buffer.concat([Buffer.from(lines.join('\r\n')), body]);
}

/** Bytes of a complete chunked body starting at `from`, or -1 while more must arrive. */
function chunkedLength(buf: Buffer, from: number): number {
  let at = from;
  for (;;) {
    const lineEnd = buf.indexOf(CRLF, at);
    if (lineEnd < 0) return -1;
    const size = parseInt(buf.toString('latin1', at, lineEnd), 16);
    const next = lineEnd + 2 + size + 2;
    if (next > buf.length) return -1;
    if (size === 0) return next - from;
    at = next;
  }
}

/** The length of the first complete response in `buf` and its status, or undefined. */
export function completeResponse(buf: Buffer): { length: number; status: number } | undefined {
  const headEnd = buf.indexOf(HEADER_END);
  if (headEnd < 0) return undefined;
  const head = buf.toString('latin1', 0, headEnd).toLowerCase();
  const status = Number(head.slice(9, 12));
  const bodyStart = headEnd + 4;
  const declared = /\r\ncontent-length:\s*(\d+)/.exec(head);
  if (declared !== null) {
    const length = bodyStart + Number(declared[1]);
    return length <= buf.length ? { length, status } : undefined;
  }
  if (/\r\ntransfer-encoding:\s*chunked/.test(head)) {
    const body = chunkedLength(buf, bodyStart);
    return body < 0 ? undefined : { length: bodyStart + body, status };
  }
  throw new Error(`a response without length framing: ${head.split('\r\n')[0]}`);
}

/** Nanoseconds the process has spent on a CPU, summed over its live threads. */
export function processCpuNs(pid: number): number {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return total;
}

/**
 * How often the process's main thread was preempted (taken off its CPU while runnable): its
 * involuntary context switches in /proc/PID/status.
 */
export function preemptions(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

export interface LoadResult {
  requests: number;
  perSecond: number;
  /** Server CPU per request, µs (from /proc/PID/task/*\/schedstat). */
  serverCpuUs: number;
  /** This load generator's CPU per request, µs. */
  clientCpuUs: number;
  /** Share of one core the server and this process used during the run. */
  serverCores: number;
  clientCores: number;
  /** How long the server stayed busy after the last reply (work the load left behind), ms. */
  tailMs: number;
}

/**
 * One connection's loop: send, read one full response, repeat until the deadline. Reads land
 * in one buffer per connection (`onread`), so a reply costs no allocation here.
 */
function lane(
  port: number,
  next: () => Buffer,
  deadline: number,
  onReply: () => void,
  checkResult: boolean,
) {
  return new Promise<void>((resolve, reject) => {
    const inbox = Buffer.allocUnsafe(1 << 20);
    let filled = 0;
    const fail = (error: Error) => {
      socket.destroy();
      reject(error);
    };
    const received = (nread: number) => {
      filled += nread;
      const reply = completeResponse(inbox.subarray(0, filled));
      if (reply === undefined) {
        if (filled === inbox.length) fail(new Error('a response larger than 1 MiB'));
        return;
      }
      if (reply.status !== 200)
        return fail(new Error(`HTTP ${reply.status}: ${inbox.toString('utf8', 0, 300)}`));
      if (reply.length !== filled) return fail(new Error('more than one response in flight'));
      // An HTTP 200 can carry a JSON-RPC error (always so in an SSE frame): it is no throughput.
      if (checkResult && inbox.subarray(0, filled).indexOf(RESULT) < 0) {
        return fail(new Error(`no JSON-RPC result: ${inbox.toString('utf8', 0, filled)}`));
      }
      filled = 0;
      onReply();
      if (performance.now() < deadline) socket.write(next());
      else socket.end(() => resolve());
    };
    const socket: Socket = connect({
      port,
      host: '127.0.0.1',
      noDelay: true,
      onread: {
        buffer: () => inbox.subarray(filled),
        callback: (nread) => {
          received(nread);
          return true;
        },
      },
    });
    socket.on('connect', () => socket.write(next()));
    socket.on('error', reject);
  });
}

/** Drives `url` with `call` on `connections` sockets for `ms`; the server is process `pid`. */
export async function drive(
  url: string,
  call: Call,
  pid: number,
  connections: number,
  ms: number,
  checkResult = false,
): Promise<LoadResult> {
  const request = rawRequest(url, call);
  return driveEach(url, () => request, pid, connections, ms, checkResult);
}

/**
 * As `drive`, but each request sent is `next()`: e.g. tasks/get of a different task each time
 * (requests built beforehand, so the generator's cost stays that of a copy); `next` is told
 * which connection sends (a session's requests in flight need ids of their own). With
 * `checkResult`, a reply without a JSON-RPC result (an error in a 200) fails the run.
 */
export async function driveEach(
  url: string,
  next: (connection: number) => Buffer,
  pid: number,
  connections: number,
  ms: number,
  checkResult = false,
): Promise<LoadResult> {
  const port = Number(new URL(url).port);
  let requests = 0;
  const server0 = processCpuNs(pid);
  const client0 = process.cpuUsage();
  const started = performance.now();
  const deadline = started + ms;
  const lanes = Array.from({ length: connections }, (_, i) =>
    lane(
      port,
      () => next(i),
      deadline,
      () => (requests += 1),
      checkResult,
    ),
  );
  await Promise.all(lanes);
  const client = process.cpuUsage(client0);
  const loadMs = performance.now() - started;
  const tailMs = await settle(pid);
  const elapsedMs = loadMs + tailMs;
  const serverNs = processCpuNs(pid) - server0;
  const clientUs = client.user + client.system;
  return {
    requests,
    perSecond: requests / (elapsedMs / 1000),
    serverCpuUs: serverNs / 1000 / requests,
    clientCpuUs: clientUs / requests,
    serverCores: serverNs / 1e6 / elapsedMs,
    clientCores: clientUs / 1000 / loadMs,
    tailMs,
  };
}

const QUIET_WINDOW_MS = 50;
/** A server is done with a load once it spends under this share of a core. */
const QUIET_SHARE = 0.05;
const MAX_TAIL_MS = 10_000;

/**
 * Waits until the server has finished the work the load left behind (a created task is run
 * after its reply; a queue of them can outlast the load), so that work counts in its CPU per
 * request and in its rate instead of landing, unmeasured, in the next measurement's slice.
 * Returns how long the server stayed busy after the last reply (the quiet window that ended
 * the wait not counted).
 */
async function settle(pid: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    const windowStart = performance.now();
    const cpu0 = processCpuNs(pid);
    await new Promise((resolve) => setTimeout(resolve, QUIET_WINDOW_MS));
    const busyMs = (processCpuNs(pid) - cpu0) / 1e6;
    const windowMs = performance.now() - windowStart;
    if (busyMs < QUIET_SHARE * windowMs || windowStart - started > MAX_TAIL_MS) {
      return windowStart - started;
    }
  }
}
