import type { StandardSchemaWithJSON } from '@modelcontextprotocol/server';

type JsonSchemaMethod = (options: unknown) => Record<string, unknown>;

const converted = new WeakMap<object, object>();

/** A conversion to JSON Schema computed once per options, handed out as a fresh copy each time. */
function convertOnce(convert: JsonSchemaMethod): JsonSchemaMethod {
  const texts = new Map<string, string>();
  return (options) => {
    const key = JSON.stringify(options ?? null);
    let text = texts.get(key);
    if (text === undefined) texts.set(key, (text = JSON.stringify(convert(options))));
    return JSON.parse(text) as Record<string, unknown>;
  };
}

/**
 * The same schema, converting itself to JSON Schema only once. McpServer converts a tool's
 * input schema on every `tools/call` (for the `Mcp-Param-*` header check) and keeps the result
 * per instance, and taskrail builds an instance per request: zod's conversion then costs more
 * than the rest of a no-op call's SDK dispatch. Validation and everything else still reach the
 * schema itself (the copy inherits from it); a schema without `jsonSchema` is returned as is.
 */
export function schemaConvertedOnce<S extends StandardSchemaWithJSON>(schema: S): S {
  const known = converted.get(schema);
  if (known !== undefined) return known as S;
  const standard = schema['~standard'];
  const jsonSchema = standard.jsonSchema as
    { input: JsonSchemaMethod; output: JsonSchemaMethod } | undefined;
  if (jsonSchema === undefined) return schema;
  const once = Object.create(schema) as S;
  Object.defineProperty(once, '~standard', {
    value: {
      ...standard,
      jsonSchema: { input: convertOnce(jsonSchema.input), output: convertOnce(jsonSchema.output) },
    },
  });
  converted.set(schema, once);
  return once;
}
