import { fromJsonSchema, type McpServer } from '@modelcontextprotocol/server';
import { text } from '../src/server/tools/sleep.js';

/** SEP-1613/SEP-2106: these 2020-12 keywords must survive into `tools/list` untouched. */
const JSON_SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
} as const;

/** SEP-2243: `region` is mirrored into an `Mcp-Param-Region` header, which the SDK validates. */
const HEADER_PARAM_SCHEMA = {
  type: 'object',
  properties: {
    region: { type: 'string', 'x-mcp-header': 'Region' },
    query: { type: 'string' },
  },
  required: ['region'],
} as const;

type Schema = Parameters<typeof fromJsonSchema>[0];

/** Fixtures declared by raw JSON Schema (no zod round trip, which would drop keywords). */
export function registerSchemaFixtures(mcp: McpServer): void {
  mcp.registerTool(
    'json_schema_2020_12_tool',
    {
      description: 'Tool with JSON Schema 2020-12 features',
      inputSchema: fromJsonSchema(JSON_SCHEMA_2020_12 as unknown as Schema),
    },
    (args) => ({ content: [text(`Received: ${JSON.stringify(args)}`)] }),
  );
  mcp.registerTool(
    'test_header_param',
    {
      description: 'Echoes `region`, which clients also send as the Mcp-Param-Region header.',
      inputSchema: fromJsonSchema(HEADER_PARAM_SCHEMA as unknown as Schema),
    },
    (args) => ({ content: [text(`Region: ${String((args as { region?: unknown }).region)}`)] }),
  );
}
