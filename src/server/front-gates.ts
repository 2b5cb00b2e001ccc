import {
  isObject,
  isWireError,
  missingCapability,
  missingTasksCapability,
  type HeaderReader,
  type IncomingRequest,
} from '../protocol/index.js';
import { normalizeTaskOption } from '../runtime/tool.js';
import type { ToolRegistry } from './registry.js';
import { checkModern, errorReply, type Reply } from './task-methods.js';

/**
 * -32021 (HTTP 400) for a modern `tools/call` that lacks a capability the tool needs: the
 * tasks extension for a `required` task tool, or the tool's `requiredClientCapabilities`.
 * Checked here because the SDK turns errors thrown by a tool into `isError` results.
 */
export function capabilityGate(
  tools: ToolRegistry,
  req: IncomingRequest,
  headers: HeaderReader,
): Reply | undefined {
  if (!isObject(req.params) || typeof req.params['name'] !== 'string') return undefined;
  const tool = tools.definition(req.params['name']);
  if (tool === undefined) return undefined;
  const mode = normalizeTaskOption(tool.config.task).mode;
  const required = tool.config.requiredClientCapabilities;
  if (mode !== 'required' && required === undefined) return undefined;
  const checked = checkModern(req, headers);
  if (isWireError(checked)) return undefined;
  const id = req.id ?? null;
  if (mode === 'required' && !checked.declaresTasks)
    return errorReply(id, missingTasksCapability());
  if (required === undefined) return undefined;
  const missing = Object.keys(required).filter((key) => !isObject(checked.clientCapabilities[key]));
  if (missing.length === 0) return undefined;
  return errorReply(
    id,
    missingCapability(Object.fromEntries(missing.map((key) => [key, required[key]]))),
  );
}
