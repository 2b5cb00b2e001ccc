import {
  isObject,
  missingCapability,
  missingTasksCapability,
  type IncomingRequest,
  type Wire2026Envelope,
  type WireError,
} from '../../protocol/index.js';
import type { JsonObject } from '../../task/record.js';
import { normalizeTaskOption } from '../../runtime/tool.js';
import type { ToolRegistry } from '../tasks/tool-registry.js';

interface ToolNeeds {
  tasks: boolean;
  required: JsonObject | undefined;
}

/** What a `tools/call` of a registered tool needs from the client, if anything. */
function toolNeeds(tools: ToolRegistry, req: IncomingRequest): ToolNeeds | undefined {
  if (!isObject(req.params) || typeof req.params['name'] !== 'string') return undefined;
  const tool = tools.definition(req.params['name']);
  if (tool === undefined) return undefined;
  const tasks = normalizeTaskOption(tool.config.task).mode === 'required';
  const required = tool.config.requiredClientCapabilities;
  return tasks || required !== undefined ? { tasks, required } : undefined;
}

/**
 * The -32021 (HTTP 400) a 2026-07-28 `tools/call` with a checked envelope earns when it lacks a
 * capability the tool needs: the tasks extension for a `required` task tool, or the tool's
 * `requiredClientCapabilities`. Checked here because the SDK turns errors thrown by a tool into
 * `isError` results.
 */
export function missingFor(
  tools: ToolRegistry,
  req: IncomingRequest,
  envelope: Wire2026Envelope,
): WireError | undefined {
  const needs = toolNeeds(tools, req);
  if (needs === undefined) return undefined;
  if (needs.tasks && !envelope.declaresTasks) return missingTasksCapability();
  const required = needs.required;
  if (required === undefined) return undefined;
  const caps = envelope.clientCapabilities;
  const missing = Object.keys(required).filter((key) => !isObject(caps[key]));
  if (missing.length === 0) return undefined;
  return missingCapability(Object.fromEntries(missing.map((key) => [key, required[key]])));
}
