import type { McpHttpHandler } from '@modelcontextprotocol/server';
import { declaresTasks, isObject, META, metaOf } from '../../protocol/index.js';
import { normalizeTaskOption } from '../../runtime/tool.js';
import { envelopeClientInfo, hostProfile } from '../tasks/host-profiles.js';
import type { ToolRegistry } from '../tasks/tool-registry.js';
import type { TaskStore } from '../../store/port.js';
import { ANONYMOUS } from '../tasks/principal.js';
import { onResourceListChanges } from './resource-list-changes.js';

type SdkFetch = McpHttpHandler['fetch'];

/** A 2026-07-28 `tools/list` from a host that follows only `required` tools as tasks. */
function wantsHints(parsed: unknown): boolean {
  if (!isObject(parsed) || parsed['method'] !== 'tools/list') return false;
  const meta = metaOf(parsed['params']);
  if (!declaresTasks(meta?.[META.clientCapabilities])) return false;
  return hostProfile(envelopeClientInfo(meta)).tasksOnlyWhenRequired === true;
}

/**
 * Adds `execution.taskSupport` (a 2025-11-25 field the SDK drops from 2026-07-28 answers) to a
 * `tools/list` answer for Copilot CLI `--experimental`: it declares the tasks extension on every
 * call but follows a call as a task only when the tool says `required`, and fails on a
 * CreateTaskResult for any other (so taskrail answers those inline, sdk/tools-call.ts).
 */
export function withTaskSupportHints(fetch: SdkFetch, tools: ToolRegistry): SdkFetch {
  return async (request, options) => {
    const response = await fetch(request, options);
    if (!wantsHints(options?.parsedBody)) return response;
    if (!(response.headers.get('content-type') ?? '').includes('application/json')) return response;
    const body = (await response.json()) as { result?: { tools?: unknown[] } };
    for (const tool of body.result?.tools ?? []) {
      if (!isObject(tool) || typeof tool['name'] !== 'string') continue;
      const registered = tools.definition(tool['name']);
      if (registered === undefined) continue;
      tool['execution'] = { taskSupport: normalizeTaskOption(registered.config.task).mode };
    }
    const headers = new Headers(response.headers);
    headers.delete('content-length');
    return new Response(JSON.stringify(body), { status: response.status, headers });
  };
}

/**
 * The SDK's handler as the hosts need it: Copilot's task-support hints in `tools/list`, and, on
 * a server without auth (every 2026-07-28 caller the one anonymous principal, so the SDK's
 * broadcast reaches only those who can see the resource), `notifications/resources/list_changed`
 * on the listen streams that asked for it. Returns it and the function that stops the latter.
 */
export function handlerForHosts(
  handler: McpHttpHandler,
  tools: ToolRegistry,
  store: TaskStore,
  withoutAuth: boolean,
): { sdk: McpHttpHandler; stop: () => void } {
  const sdk: McpHttpHandler = { ...handler, fetch: withTaskSupportHints(handler.fetch, tools) };
  const stop = withoutAuth
    ? onResourceListChanges(store, { principal: ANONYMOUS }, () => sdk.notify.resourcesChanged())
    : () => undefined;
  return { sdk, stop };
}
