import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

/**
 * JSON Schema 2020-12 checks of tool arguments (against `inputSchema`, before anything is sent)
 * and of `structuredContent` (against `outputSchema`, after). A schema ajv cannot compile (a
 * remote `$ref`, an unknown draft) is not the caller's fault: the check is skipped, never failed.
 * Ajv is built on the first schema it has to compile: its first compile compiles the 2020-12
 * meta-schema, about 50 ms, which a CLI run calling a tool without arguments need not pay.
 */
export class SchemaChecker {
  #ajv: Ajv2020 | undefined;
  readonly #cache = new Map<string, ValidateFunction | null>();

  /** Returns the list of problems; empty when the value conforms (or the schema is unusable). */
  check(schema: Record<string, unknown> | undefined, value: unknown): string[] {
    if (schema === undefined || acceptsAnyObject(schema, value)) return [];
    const validate = this.#compile(schema);
    if (validate === null || validate(value)) return [];
    return (validate.errors ?? []).map(
      (e) => `${e.instancePath === '' ? '(root)' : e.instancePath} ${e.message ?? 'is invalid'}`,
    );
  }

  #compile(schema: Record<string, unknown>): ValidateFunction | null {
    const key = JSON.stringify(schema);
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached;
    let validate: ValidateFunction | null;
    try {
      validate = (this.#ajv ??= newAjv()).compile(withoutForeignDialect(schema));
    } catch {
      validate = null;
    }
    this.#remember(key, validate);
    return validate;
  }

  /**
   * Schemas come from servers the host may not trust, so the cache is bounded: when it is full
   * it starts over with a fresh ajv (which holds every schema it compiled), dropping both.
   */
  #remember(key: string, validate: ValidateFunction | null): void {
    if (this.#cache.size >= MAX_CACHED_SCHEMAS) {
      this.#cache.clear();
      this.#ajv = undefined;
    }
    this.#cache.set(key, validate);
  }

  /** For tests: how many compiled schemas are held. */
  get cachedSchemas(): number {
    return this.#cache.size;
  }
}

const MAX_CACHED_SCHEMAS = 256;

function newAjv(): Ajv2020 {
  return new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
}

const ANY_OBJECT_KEYS = new Set(['type', 'properties', 'additionalProperties', '$schema']);

/**
 * The schema of a tool without arguments — `{ type: 'object' }`, perhaps with no `properties`,
 * `additionalProperties` true or `{}`, and a `$schema` — met by an object: what ajv would say, without ajv. Any other schema, or any
 * other value, goes to ajv (and its messages).
 */
function acceptsAnyObject(schema: Record<string, unknown>, value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  if (schema.type !== 'object') return false;
  for (const key in schema) if (!ANY_OBJECT_KEYS.has(key)) return false;
  const properties = schema.properties;
  if (properties !== undefined && !isEmptyObject(properties)) return false;
  const additional = schema.additionalProperties;
  if (additional !== undefined && additional !== true && !isEmptyObject(additional)) return false;
  return schema.$schema === undefined || typeof schema.$schema === 'string';
}

function isEmptyObject(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  for (const _key in value) return false;
  return Object.getOwnPropertySymbols(value).length === 0;
}

/** Ajv's 2020 build refuses other `$schema` URIs; MCP tool schemas are 2020-12 by default. */
function withoutForeignDialect(schema: Record<string, unknown>): Record<string, unknown> {
  const dialect = schema.$schema;
  if (typeof dialect !== 'string' || dialect.includes('2020-12')) return schema;
  const { $schema: _dropped, ...rest } = schema;
  return rest;
}
