import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TaskRuntime } from '../../runtime/runtime.js';
import type { TaskStore } from '../../store/port.js';
import { TaskrailError } from '../../task/errors.js';
import { serveApi, json, type ApiDeps } from './api.js';
import { AdminFeed } from './feed.js';
import { instrumentStore } from './instrument-store.js';
import { TaskJournal } from './journal.js';
import { AdminMetrics, type ExtraGauge } from './metrics.js';
import { serveOnNode } from './node-adapter.js';
import { PAGE_ASSETS } from './page.js';
import type { Logger, RunObserver } from '../../runtime/api.js';
import {
  oauthOperators,
  tokenOperators,
  type AdminAuthenticator,
  type AdminOAuthOptions,
} from './operators.js';
import { checkAdminTokens, type AdminTokenEntry } from './tokens.js';

export type { ExtraGauge } from './metrics.js';

export interface AdminOptions {
  /**
   * Admin bearer token → operator: a name (`"ops"`), or `{ name, canAnswer }` for operators
   * allowed to answer parked tasks' input on a caller's behalf.
   */
  tokens?: Readonly<Record<string, AdminTokenEntry>>;
  /** Or OAuth access tokens with an admin scope (read only, or read and write). */
  oauth?: AdminOAuthOptions;
  /** Re-list interval while a dashboard is connected (catches other processes on SQLite). Default 2000 ms. */
  pollMs?: number;
  /** More gauges on /metrics, read at each scrape (e.g. `taskrail_workers_alive` under --no-worker). */
  gauges?: readonly ExtraGauge[];
}

export interface AdminContext {
  store: TaskStore;
  /** Caller tokens (`auth`): an admin token may not be one of them. */
  callerTokens?: Readonly<Record<string, string>> | undefined;
  runtime: () => TaskRuntime;
  /** The server's resource URL (OAuth `aud`), once known. */
  resource?: () => string | undefined;
  logger?: Logger | undefined;
}

/** The operator face the HTTP front routes to: `/dashboard…` and `/metrics`. */
export interface AdminFace {
  /** The store to give the runtime: counts errors and lease heartbeats for `/metrics`. */
  readonly store: TaskStore;
  /** The observer to give the runtime: counts time-outs, retries and durable waits. */
  readonly observer: RunObserver;
  handles(path: string): boolean;
  fetch(request: Request): Promise<Response>;
  node(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Drops the event listeners, the re-list timer and every open dashboard stream. */
  close(): void;
  /** For tests: the feed and journal behind the page. */
  readonly feed: AdminFeed;
}

function adminAuthenticator(options: AdminOptions, context: AdminContext): AdminAuthenticator {
  if ((options.tokens === undefined) === (options.oauth === undefined)) {
    throw new TaskrailError('CONFIG', 'admin needs either tokens or oauth (one of them)');
  }
  if (options.oauth !== undefined) {
    return oauthOperators(options.oauth, context.resource ?? (() => undefined), context.logger);
  }
  return tokenOperators(checkAdminTokens(options.tokens, context.callerTokens));
}

/** `/metrics` needs the optional prom-client package; without it the answer says what to install. */
async function renderMetrics(metrics: AdminMetrics): Promise<Response> {
  try {
    const { contentType, body } = await metrics.render();
    return new Response(body, { headers: { 'content-type': contentType } });
  } catch (error) {
    if (error instanceof TaskrailError && error.code === 'CONFIG') {
      return json(503, { error: 'unavailable', message: error.message });
    }
    throw error;
  }
}

export function createAdmin(options: AdminOptions, context: AdminContext): AdminFace {
  const authenticate = adminAuthenticator(options, context);
  const pollMs = options.pollMs ?? 2000;
  const metrics = new AdminMetrics(() => store, options.gauges);
  const store = instrumentStore(context.store, metrics);
  const journal = new TaskJournal();
  const feed = new AdminFeed({ store, journal, metrics, pollMs, pollLimit: 200 });
  const closing = new AbortController();
  const api: ApiDeps = {
    store,
    runtime: context.runtime,
    journal,
    feed,
    pollMs,
    closing: closing.signal,
  };

  const handle = async (request: Request): Promise<Response> => {
    const path = new URL(request.url).pathname;
    const asset = request.method === 'GET' ? PAGE_ASSETS[path] : undefined;
    if (asset !== undefined) return asset();
    const check = await authenticate(request.headers.get('authorization'));
    if (!check.ok) return check.response;
    const operator = check.operator;
    if (path === '/metrics' && request.method === 'GET') return renderMetrics(metrics);
    if (path.startsWith('/dashboard/api/')) {
      return serveApi(api, request, operator, path.slice('/dashboard/api/'.length));
    }
    return json(404, { error: 'not_found' });
  };

  return {
    store,
    observer: metrics,
    feed,
    handles: (path) =>
      path === '/metrics' || path === '/dashboard' || path.startsWith('/dashboard/'),
    fetch: handle,
    node: (req, res) => serveOnNode(handle, req, res),
    close() {
      closing.abort();
      feed.close();
    },
  };
}

export { loadAdminTokenFile, type AdminTokenEntry, type AdminOperator } from './tokens.js';
export { DEFAULT_ADMIN_SCOPE, type AdminOAuthOptions } from './operators.js';
