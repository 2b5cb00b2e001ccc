import type { McpHttpHandler } from '@modelcontextprotocol/server';
import { declaresTasks, isObject, META, metaOf } from '../../protocol/index.js';
import { normalizeTaskOption } from '../../runtime/tool.js';
import { envelopeClientInfo, hostProfile } from '../tasks/host-profiles.js';
import type { ToolRegistry } from '../tasks/tool-registry.js';

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
 * The SDK's handler as the hosts need it: Copilot's task-support hints in `tools/list`. (No
 * `notifications/resources/list_changed` goes to a stateless 2026-07-28 listen stream: an
 * anonymous stateless caller lists no task resources, and with auth the SDK's broadcast could
 * not tell principals apart; sessions get theirs, wire-2025/sessions.ts.)
 */
export function handlerForHosts(handler: McpHttpHandler, tools: ToolRegistry): McpHttpHandler {
  return { ...handler, fetch: withTaskSupportHints(handler.fetch, tools) };
}
