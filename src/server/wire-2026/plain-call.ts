import type { StandardSchemaV1 } from '@modelcontextprotocol/server';
import { isObject } from '../../protocol/index.js';
import type { JsonObject } from '../../task/record.js';
import type { RegisteredTaskTool } from '../tasks/types.js';

/**
 * Checks shared by the `tools/call` fast paths in front of the SDK (task creation, synchronous
 * calls): each says whether a request is plain enough that the front's answer is the SDK's.
 */

export function isJsonContentType(value: string | undefined): boolean {
  return value !== undefined && /^application\/json\s*(;|$)/i.test(value.trim());
}

/** The arguments as the tool's schema outputs them, or undefined when it refuses them. */
export async function validArguments(
  tool: RegisteredTaskTool,
  raw: unknown,
): Promise<JsonObject | undefined> {
  const args = raw ?? {};
  const schema = tool.config.inputSchema as StandardSchemaV1 | undefined;
  if (schema === undefined) return isObject(args) ? args : undefined;
  // Not a Standard Schema after all: the SDK path reports that its own way.
  if (typeof schema['~standard']?.validate !== 'function') return undefined;
  const outcome = await schema['~standard'].validate(args);
  if (outcome.issues !== undefined && outcome.issues.length > 0) return undefined;
  const value = (outcome as { value: unknown }).value;
  return isObject(value) ? value : undefined;
}

const mirrorsHeaders = new WeakMap<object, boolean>();

/**
 * Whether the tool's input schema mirrors arguments into `Mcp-Param-*` headers (SEP-2243
 * `x-mcp-header`), which the SDK checks against the request's headers before dispatch. Such
 * calls are left to it. Worked out once per schema; a schema that will not convert counts as yes.
 */
export function mirrorsParamHeaders(tool: RegisteredTaskTool): boolean {
  const schema = tool.config.inputSchema;
  if (schema === undefined) return false;
  let known = mirrorsHeaders.get(schema);
  if (known === undefined) {
    try {
      const json = schema['~standard'].jsonSchema.input({ target: 'draft-2020-12' });
      known = JSON.stringify(json).includes('"x-mcp-header"');
    } catch {
      known = true;
    }
    mirrorsHeaders.set(schema, known);
  }
  return known;
}
