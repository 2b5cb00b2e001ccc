/** The backends a store URL can name. */
export type StoreKind = 'sqlite' | 'memory' | 'redis' | 'postgres';

/**
 * Which backend a store URL names, by its scheme alone (`sqlite:PATH`, `memory:`,
 * `redis://` or `rediss://`, `postgres://` or `postgresql://`); undefined for any other.
 * Each adapter parses the rest of its own URL.
 */
export function storeKindOf(url: string): StoreKind | undefined {
  const trimmed = url.trim();
  if (trimmed.startsWith('sqlite:')) return 'sqlite';
  if (trimmed === 'memory:' || trimmed === 'memory://') return 'memory';
  if (/^rediss?:\/\//.test(trimmed)) return 'redis';
  if (/^postgres(ql)?:\/\//.test(trimmed)) return 'postgres';
  return undefined;
}
