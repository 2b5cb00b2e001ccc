/**
 * The HTTP benchmarks' load generator and child-server handling. Servers run as child
 * processes; this process only sends requests over keep-alive sockets, so the server measured
 * and the load generator never share an event loop.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { startNode } from '../../test/helpers/child.js';
import { median, spread } from './stats.js';

/** The CLI the benchmarks start; TASKRAIL_BENCH_MAIN points at another build (before/after). */
export const MAIN = process.env['TASKRAIL_BENCH_MAIN'] ?? 'dist/cli/main.js';
export const BENCH_TOOLS = '.build/bench/lib/tools.js';
export const SERVERS = '.build/bench/lib/servers.js';
export const TASKS_EXT = 'io.modelcontextprotocol/tasks';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One prepared POST: headers and body serialized once, sent many times. */
export interface Call {
  headers: Record<string, string>;
  body: string;
}

export interface Endpoint {
  url: URL;
  post(call: Call): Promise<Reply>;
  close(): void;
}

export function endpoint(url: string, sockets = 64): Endpoint {
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  const target = new URL(url);
  const post = (call: Call) =>
    new Promise<Reply>((resolve, reject) => {
      const req = request(
        target,
        {
          method: 'POST',
          agent,
          headers: { ...call.headers, 'content-length': Buffer.byteLength(call.body) },
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.on('error', reject);
      req.end(call.body);
    });
  return { url: target, post, close: () => agent.destroy() };
}

/** A 2026-07-28 request; `tasks` declares the tasks extension in the envelope. */
export function wire2026(method: string, params: Record<string, unknown>, tasks: boolean): Call {
  const name = method === 'tools/call' ? params['name'] : params['taskId'];
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
  };
  if (typeof name === 'string') headers['mcp-name'] = name;
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { [TASKS_EXT]: {} } } : {},
  };
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta } });
  return { headers, body };
}

/** The JSON-RPC result of a reply (JSON or a one-message SSE stream); throws on errors. */
export function resultOf(reply: Reply): Record<string, unknown> {
  const text = reply.body.startsWith('{')
    ? reply.body
    : (reply.body.split('\n').find((line) => line.startsWith('data: ')) ?? '').slice(6);
  const message = JSON.parse(text) as { result?: Record<string, unknown>; error?: unknown };
  if (message.result === undefined) {
    throw new Error(`HTTP ${reply.status}: ${JSON.stringify(message.error ?? reply.body)}`);
  }
  return message.result;
}

export async function checked(ep: Endpoint, call: Call): Promise<Record<string, unknown>> {
  return resultOf(await ep.post(call));
}

/** Sequential round trips; milliseconds each. */
export async function latencies(send: () => Promise<unknown>, count: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const started = performance.now();
    await send();
    samples.push(performance.now() - started);
  }
  return samples;
}

/** Requests per second with `concurrency` requests in flight for `ms`. */
export async function rate(
  send: () => Promise<unknown>,
  concurrency: number,
  ms: number,
): Promise<number> {
  let done = 0;
  const started = performance.now();
  const deadline = started + ms;
  const loop = async () => {
    while (performance.now() < deadline) {
      await send();
      done += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  return done / ((performance.now() - started) / 1000);
}

/**
 * Runs every measurement of `targets` once per round, in turn, so all see the same machine
 * load; returns each target's per-round values.
 */
export async function rounds<K extends string, V = number>(
  count: number,
  targets: Record<K, () => Promise<V>>,
): Promise<Record<K, V[]>> {
  const keys = Object.keys(targets) as K[];
  const out = Object.fromEntries(keys.map((k) => [k, [] as V[]])) as Record<K, V[]>;
  for (let round = 0; round < count; round += 1) {
    for (const key of round % 2 === 0 ? keys : [...keys].reverse()) {
      out[key].push(await targets[key]());
    }
  }
  return out;
}

/** Per-round ratios a/b: their median and spread. */
export function ratio(a: number[], b: number[]): { median: number; spread: string } {
  const each = a.map((value, i) => value / (b[i] as number));
  return { median: median(each), spread: spread(each) };
}

export interface ChildServer {
  url: string;
  process: ChildProcess;
  rssMiB(): number;
  stop(): Promise<void>;
}

/** `taskrail serve` on a free port, on `store`, with the bench tools and warnings only. */
export function serveBench(store: string, tools = BENCH_TOOLS): Promise<ChildServer> {
  const args = ['serve', '--port', '0', '--tools', tools, '--log-level', 'warn', '--store', store];
  return startServer(MAIN, args);
}

/**
 * Starts `node script args…` and resolves once a stdout line matches `pattern` (by default a
 * URL ending in /mcp); a child that never gets there is killed.
 */
export async function startServer(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  pattern = /(http:\/\/\S+\/mcp)/,
): Promise<ChildServer> {
  const child = startNode(script, args, env, { stdin: 'ignore' });
  let match: RegExpMatchArray;
  try {
    match = await child.line(pattern, 30_000);
  } catch (error) {
    await child.kill('SIGKILL');
    throw new Error(`${script} ${args.join(' ')}: ${(error as Error).message}`);
  }
  return {
    url: match[1] ?? match[0],
    process: child.process,
    rssMiB: () => rssMiB(child.process.pid as number),
    stop: () => child.stop(5_000),
  };
}

export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+)/.exec(status)?.[1];
  return Number(kb) / 1024;
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
