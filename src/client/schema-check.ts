import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

/**
 * JSON Schema 2020-12 checks of tool arguments (against `inputSchema`, before anything is sent)
 * and of `structuredContent` (against `outputSchema`, after). A schema ajv cannot compile (a
 * remote `$ref`, an unknown draft) is not the caller's fault: the check is skipped, never failed.
 */
export class SchemaChecker {
  #ajv = newAjv();
  readonly #cache = new Map<string, ValidateFunction | null>();

  /** Returns the list of problems; empty when the value conforms (or the schema is unusable). */
  check(schema: Record<string, unknown> | undefined, value: unknown): string[] {
    if (schema === undefined) return [];
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
      validate = this.#ajv.compile(withoutForeignDialect(schema));
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
      this.#ajv = newAjv();
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

/** Ajv's 2020 build refuses other `$schema` URIs; MCP tool schemas are 2020-12 by default. */
function withoutForeignDialect(schema: Record<string, unknown>): Record<string, unknown> {
  const dialect = schema.$schema;
  if (typeof dialect !== 'string' || dialect.includes('2020-12')) return schema;
  const { $schema: _dropped, ...rest } = schema;
  return rest;
}
