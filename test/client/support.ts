import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runNode, startNode, type Child, type RunResult } from '../helpers/child.js';
import { startServing } from '../helpers/taskrail.js';

export const CLI = join(process.cwd(), 'dist/cli/main.js');

export function tempDir(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `taskrail-${prefix}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface Serve {
  url: string;
  child: Child;
  stop(): Promise<void>;
}

/** `taskrail serve --port 0 --store sqlite:<dir>/tasks.db`, ready once it prints its URL. */
export async function startServe(dir: string, extra: string[] = []): Promise<Serve> {
  const args = ['serve', '--port', '0', '--store', `sqlite:${join(dir, 'tasks.db')}`, ...extra];
  const { url, child } = await startServing(args, { main: CLI, timeoutMs: 20_000 });
  return { url, child, stop: () => child.kill('SIGTERM') };
}

export interface Seen {
  method: string;
  at: number;
  params: Record<string, unknown>;
  headers: http.IncomingHttpHeaders;
}

export interface Proxy {
  url: string;
  seen: Seen[];
  count(method: string): number;
  close(): Promise<void>;
}

/** A counting proxy on 127.0.0.1: records every JSON-RPC request (method, arrival time) it forwards. */
export async function startProxy(
  target: string,
  {
    cutListenAfterMs,
    dropReply,
    delayReply,
  }: {
    cutListenAfterMs?: number;
    /** Forwards the request, then cuts the client's connection instead of answering. */
    dropReply?: (seen: Seen) => boolean;
    /** Forwards the request at once, and holds the reply back this many milliseconds. */
    delayReply?: (seen: Seen) => number;
  } = {},
): Promise<Proxy> {
  const upstream = new URL(target);
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let method = '?';
      try {
        const msg = JSON.parse(body.toString()) as {
          method?: string;
          params?: Record<string, unknown>;
        };
        method = msg.method ?? '?';
        seen.push({
          method,
          at: performance.now(),
          params: msg.params ?? {},
          headers: req.headers,
        });
      } catch {
        seen.push({ method: '?', at: performance.now(), params: {}, headers: req.headers });
      }
      const entry = seen.at(-1); // pushed just above, in this same turn
      const forward = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: upstream.pathname,
          method: req.method,
          headers: req.headers,
        },
        (up) => {
          if (dropReply !== undefined && entry !== undefined && dropReply(entry)) {
            up.resume();
            up.on('end', () => res.socket?.destroy());
            return;
          }
          const reply = (): void => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
          };
          const delay = entry === undefined ? 0 : (delayReply?.(entry) ?? 0);
          if (delay > 0) setTimeout(reply, delay);
          else reply();
          // Breaks push streams on purpose, to test the client's fallback to polling.
          if (method === 'subscriptions/listen' && cutListenAfterMs !== undefined) {
            setTimeout(() => res.destroy(), cutListenAfterMs);
          }
        },
      );
      forward.on('error', () => res.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    seen,
    count: (method) => seen.filter((s) => s.method === method).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type CliResult = RunResult;

/** Runs the CLI to completion with stdin closed (not a terminal). */
export function runCli(
  args: string[],
  home: string,
  env: NodeJS.ProcessEnv = {},
): Promise<CliResult> {
  return runNode(CLI, args, { TASKRAIL_HOME: home, ...env });
}

/** Starts the CLI and follows its output (for SIGINT / SIGKILL tests). */
export function spawnCli(args: string[], home: string): Child {
  return startNode(CLI, args, { TASKRAIL_HOME: home });
}
