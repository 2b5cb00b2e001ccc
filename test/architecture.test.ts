import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

/**
 * The import arrows of docs/architecture.md, checked on the source: a layer may import only
 * the layers listed for it. Keeps the picture true as the code grows.
 */
const ALLOWED: Record<string, readonly string[]> = {
  task: [],
  protocol: ['task'],
  store: ['task'],
  stores: ['store', 'task'],
  runtime: ['store', 'task'],
  // The BullMQ executor shares the Redis deployment (URL, prefix) of stores/redis.
  executors: ['runtime', 'store', 'task', 'stores'],
  server: ['runtime', 'store', 'task', 'protocol'],
  client: ['protocol', 'task'],
  testing: ['store', 'task', 'runtime'],
  // The proxy is a server whose tools call an upstream MCP server through the SDK client.
  proxy: ['server', 'runtime', 'store', 'task', 'protocol'],
  cli: ['client', 'server', 'runtime', 'stores', 'executors', 'store', 'task', 'protocol', 'proxy'],
  root: ['task', 'store', 'runtime'],
};

const DRIVERS = ['better-sqlite3', 'ioredis', 'bullmq', 'pg', 'graphile-worker'];

/** The Postgres packages are optional peers: only their own adapter folders may name them. */
const CONFINED: Record<string, readonly string[]> = {
  pg: ['stores/postgres/', 'executors/graphile-worker/'],
  'graphile-worker': ['executors/graphile-worker/'],
};
const SRC = resolve(new URL('../../src', import.meta.url).pathname);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

function layerOf(file: string): string {
  const parts = relative(SRC, file).split('/');
  return parts.length === 1 ? 'root' : (parts[0] as string);
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const pattern =
    /(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;
  return [...text.matchAll(pattern)].map((m) => (m[1] ?? m[2]) as string);
}

describe('architecture', () => {
  const files = sourceFiles(SRC);

  it('has source files to check', () => assert.ok(files.length > 20));

  it('keeps every import arrow pointing the allowed way', () => {
    const violations: string[] = [];
    for (const file of files) {
      const from = layerOf(file);
      const allowed = ALLOWED[from];
      if (allowed === undefined) {
        violations.push(`${relative(SRC, file)}: layer '${from}' is not in the architecture table`);
        continue;
      }
      for (const spec of importsOf(file).filter((s) => s.startsWith('.'))) {
        const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
        const to = layerOf(target);
        if (to !== from && !allowed.includes(to)) {
          violations.push(`${relative(SRC, file)} (${from}) imports ${spec} (${to})`);
        }
      }
    }
    assert.deepEqual(violations, []);
  });

  it('loads no database driver from the root entry, the task model, the port or the runtime', () => {
    const seen = new Set<string>();
    const offenders: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const spec of importsOf(file)) {
        if (spec.startsWith('.')) visit(resolve(dirname(file), spec).replace(/\.js$/, '.ts'));
        else if (DRIVERS.some((d) => spec === d || spec.startsWith(`${d}/`))) {
          offenders.push(`${relative(SRC, file)} imports ${spec}`);
        }
      }
    };
    visit(join(SRC, 'index.ts'));
    assert.deepEqual(offenders, []);
  });

  it('names pg and graphile-worker only in the postgres adapter folders', () => {
    const offenders: string[] = [];
    for (const file of files) {
      const where = relative(SRC, file);
      const text = readFileSync(file, 'utf8');
      for (const [name, folders] of Object.entries(CONFINED)) {
        const named = importsOf(file).includes(name) || text.includes(`specifier = '${name}'`);
        if (named && !folders.some((folder) => where.startsWith(folder))) {
          offenders.push(`${where} loads ${name}`);
        }
      }
    }
    assert.deepEqual(offenders, []);
  });
});
