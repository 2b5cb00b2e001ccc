import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  type McpServer,
} from '@modelcontextprotocol/server';
import { isTerminal } from '../../task/status.js';
import { coalesced } from '../tasks/coalesced.js';
import { TextTotal } from '../tasks/text-total.js';
import { callersTask, parseUri, type Handler, type TaskResourceDeps } from './task-resources.js';

/** Subscriptions one session may hold at once. */
const MAX_SUBSCRIPTIONS = 100;

/**
 * `resources/subscribe` and `resources/unsubscribe` of the task resources on a server that lives
 * for a session (2025-11-25): `notifications/resources/updated` as a task's output grows (from
 * any process: store events) and once its result is there, coalesced to a few a second, each
 * saying the text's length and whether the task ended (text-total.ts).
 * Owner-only, like a read; every subscription ends with the session.
 */
export function registerResourceSubscriptions(mcp: McpServer, deps: TaskResourceDeps): void {
  const subscriptions = new Map<string, () => void>();
  const subscribe: Handler = async (request, ctx) => {
    const uri = String(request.params?.['uri'] ?? '');
    const parsed = parseUri(uri, deps.maxReadChars);
    if (parsed === undefined) throw new ResourceNotFoundError(uri);
    const task = await callersTask(deps, parsed.taskId, ctx);
    if (task === undefined) throw new ResourceNotFoundError(uri);
    if (subscriptions.has(uri)) return {};
    if (subscriptions.size >= MAX_SUBSCRIPTIONS) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `this session already follows ${MAX_SUBSCRIPTIONS} resources: unsubscribe from one first`,
      );
    }
    const total = new TextTotal(async () => {
      return (await deps.store.readText(parsed.taskId, parsed.kind, 0, 0))?.end;
    });
    const send = async () => {
      const params = { uri, _meta: await total.meta() };
      await mcp.server.sendResourceUpdated(params);
    };
    const notify = coalesced(() => void send().catch(() => undefined));
    const ended = () => {
      total.end();
      notify.poke();
    };
    const only = { only: (id: string) => id === parsed.taskId };
    const events = deps.store.events;
    const stops = [
      events.on(
        'task:text',
        (event) => {
          if (event.kind !== parsed.kind) return;
          total.grew(event.end);
          notify.poke();
        },
        only,
      ),
      events.on('task:transition', (event) => isTerminal(event.to) && ended(), only),
      events.on('task:deleted', ended, only),
      events.on('store:resync', () => {
        total.forget();
        notify.poke();
      }),
    ];
    subscriptions.set(uri, () => {
      for (const stop of stops) stop();
      notify.stop();
    });
    return {};
  };
  const unsubscribe: Handler = async (request) => {
    const uri = String(request.params?.['uri'] ?? '');
    subscriptions.get(uri)?.();
    subscriptions.delete(uri);
    return {};
  };
  mcp.server.setRequestHandler('resources/subscribe', subscribe as never);
  mcp.server.setRequestHandler('resources/unsubscribe', unsubscribe as never);
  const closed = mcp.server.onclose;
  mcp.server.onclose = () => {
    for (const stop of subscriptions.values()) stop();
    subscriptions.clear();
    closed?.();
  };
}
