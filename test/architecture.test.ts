import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import {
  cyclesOf,
  folderOf,
  readModuleGraph,
  readRepositoryGraph,
  sourceFiles,
  type Edge,
} from './helpers/module-graph.js';

/** Every folder of the repository that holds its own code. */
const REPOSITORY_FOLDERS = ['src', 'test', 'bench', 'chaos', 'scripts', 'examples', 'conformance'];

/**
 * The layers of docs/architecture.md, checked on the resolved module graph of `src/` (static
 * and dynamic imports, `import type`, `createRequire`): which folder may load which folder and
 * which npm package. Every folder is listed, so a new one is a decision made here.
 */
const FOLDERS: Record<string, readonly string[]> = {
  '.': ['task', 'store', 'runtime'],
  task: [],
  protocol: ['task'],
  store: ['task'],
  // stores/open.ts loads each adapter on demand; adapters share only stores/shared.
  stores: ['store', 'task', 'stores/memory', 'stores/sqlite', 'stores/redis', 'stores/postgres'],
  'stores/shared': ['store', 'task'],
  'stores/memory': ['store', 'task', 'stores/shared'],
  'stores/sqlite': ['store', 'task', 'stores/shared'],
  'stores/redis': ['store', 'task', 'stores/shared'],
  'stores/postgres': ['store', 'task', 'stores/shared'],
  runtime: ['store', 'task'],
  // Each job engine shares the deployment (connection, prefix or schema) of its own store.
  executors: ['runtime', 'store', 'task', 'executors/bullmq', 'executors/graphile-worker'],
  'executors/shared': ['runtime', 'store', 'task'],
  'executors/bullmq': ['runtime', 'store', 'task', 'executors/shared', 'stores/redis'],
  'executors/graphile-worker': ['runtime', 'store', 'task', 'executors/shared', 'stores/postgres'],
  // server/ composes: its root holds only the composition and the transports. Each wire
  // builds on the task logic and the SDK glue; tasks/ knows no wire, sdk/ no transport.
  server: [
    'runtime',
    'store',
    'task',
    'protocol',
    'server/tasks',
    'server/sdk',
    'server/http',
    'server/admin',
    'server/wire-2025',
    'server/wire-2026',
    'server/listen',
    'server/oauth',
  ],
  'server/tasks': ['runtime', 'task', 'protocol'],
  // The task resources read a task's texts from the store.
  'server/sdk': ['runtime', 'store', 'task', 'protocol', 'server/tasks'],
  'server/http': ['runtime', 'task', 'protocol', 'server/tasks'],
  // The operator routes read the store and answer over HTTP with the callers' auth.
  'server/admin': ['runtime', 'store', 'task', 'server/http', 'server/oauth'],
  // A wire knows no transport: HTTP and stdio both frame what its route answers.
  'server/wire-2025': ['runtime', 'task', 'protocol', 'server/tasks', 'server/sdk', 'server/http'],
  'server/wire-2026': [
    'runtime',
    'task',
    'protocol',
    'server/tasks',
    'server/sdk',
    'server/listen',
  ],
  'server/listen': ['store', 'task', 'protocol', 'server/tasks', 'server/http'],
  'server/oauth': ['runtime', 'task', 'server/tasks', 'server/http'],
  // The built-in tool sets are tools modules like a user's: the package's entries, nothing else
  // (checked file by file below).
  'server/tools': ['.', 'server'],
  client: ['protocol', 'task'],
  testing: ['testing/store-contract', 'testing/support'],
  'testing/store-contract': ['store', 'task', 'testing/support'],
  'testing/support': ['task'],
  // The proxy is a server whose tools call an upstream MCP server through the SDK clients.
  proxy: ['server', 'server/tasks', 'runtime', 'store', 'task', 'protocol'],
  cli: [
    'client',
    'server',
    'server/http',
    'server/admin',
    'server/wire-2025',
    'server/oauth',
    'runtime',
    'stores',
    'executors',
    'executors/shared',
    'executors/bullmq',
    'executors/graphile-worker',
    'store',
    'task',
    'protocol',
    'proxy',
  ],
};

/** npm packages each folder may load (types included); a folder not listed loads none. */
const PACKAGES: Record<string, readonly string[]> = {
  protocol: ['@modelcontextprotocol/ext-tasks'],
  'stores/sqlite': ['better-sqlite3'],
  'stores/redis': ['ioredis'],
  'stores/postgres': ['pg'],
  runtime: ['ajv', '@opentelemetry/api'],
  'executors/bullmq': ['bullmq', 'ioredis'],
  'executors/graphile-worker': ['graphile-worker', 'pg'],
  server: ['@modelcontextprotocol/server', 'zod'],
  'server/tasks': ['@modelcontextprotocol/server'],
  'server/sdk': ['@modelcontextprotocol/server', 'zod'],
  // The SDK's Node adapter, loaded on first use (http/sdk-node.ts).
  'server/http': ['@modelcontextprotocol/server', '@modelcontextprotocol/node'],
  'server/wire-2025': ['@modelcontextprotocol/server', 'zod'],
  'server/wire-2026': ['@modelcontextprotocol/server'],
  'server/tools': ['@modelcontextprotocol/server', 'zod'],
  'server/admin': ['prom-client'],
  'server/oauth': ['jose'],
  client: ['@modelcontextprotocol/ext-tasks', 'ajv', 'better-sqlite3'],
  proxy: [
    '@modelcontextprotocol/sdk',
    '@modelcontextprotocol/client',
    '@modelcontextprotocol/server',
    'zod',
  ],
  cli: ['commander', 'ora'],
};

/** Node built-ins the pure layers may use (ids need randomness; the event type needs events). */
const PURE_BUILTINS: Record<string, readonly string[]> = {
  task: ['crypto'],
  protocol: [],
  store: ['events'],
};

/** Loads whose target is the user's own input: the tools module of `serve --tools`. */
const USER_MODULE_LOADS = ['cli/tool-sets.ts: import(specifier)'];

/** Entries that exist for one driver may load it when they load; every other entry only lazily. */
const ENTRY_DRIVERS: Record<string, readonly string[]> = {
  'stores/redis/index.ts': ['ioredis'],
  'executors/bullmq/index.ts': ['bullmq', 'ioredis'],
};

const ROOT = resolve(new URL('../..', import.meta.url).pathname);
const SRC = resolve(ROOT, 'src');
const manifest = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, { import?: string } | string>;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};
const OPTIONAL_PEERS = Object.keys(manifest.peerDependenciesMeta).filter(
  (name) => manifest.peerDependenciesMeta[name]?.optional === true,
);

const describeEdge = (edge: Edge): string => `${edge.from} loads ${edge.specifier}`;

/** The source files behind the package's `exports` (`index.ts`, `server/index.ts`, …). */
function publicEntries(): string[] {
  return Object.values(manifest.exports)
    .map((target) => (typeof target === 'string' ? target : (target.import ?? '')))
    .filter((path) => path.startsWith('./dist/'))
    .map((path) => path.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts'));
}

/** Every file the given entry loads at once (static, non-type imports), itself included. */
function eagerClosure(edges: Edge[], entry: string): Set<string> {
  const seen = new Set<string>([entry]);
  const queue = [entry];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    for (const edge of edges) {
      if (edge.from !== file || edge.lazy || edge.typeOnly || edge.kind !== 'file') continue;
      if (seen.has(edge.to)) continue;
      seen.add(edge.to);
      queue.push(edge.to);
    }
  }
  return seen;
}

describe('architecture (the resolved module graph of src/)', () => {
  const graph = readModuleGraph(SRC);
  const files = graph.edges.filter((edge) => edge.kind === 'file');

  it('reads a graph worth checking, with dynamic and createRequire loads resolved', () => {
    assert.ok(graph.files.length > 100, `${graph.files.length} files`);
    assert.ok(graph.edges.some((e) => e.lazy && e.to === 'stores/redis/index.ts'));
    assert.ok(graph.edges.some((e) => e.lazy && e.to === 'better-sqlite3' && !e.typeOnly));
    assert.deepEqual(
      graph.unresolved.filter((load) => !USER_MODULE_LOADS.includes(load)),
      [],
    );
  });

  it('lists every folder, and each loads only the folders listed for it', () => {
    const unlisted = [...new Set(graph.files.map(folderOf))].filter((f) => !(f in FOLDERS));
    assert.deepEqual(unlisted, [], 'folders missing from the table');
    const violations = files
      .filter((e) => folderOf(e.from) !== folderOf(e.to))
      .filter((e) => !(FOLDERS[folderOf(e.from)] ?? []).includes(folderOf(e.to)))
      .map((e) => `${describeEdge(e)} (${folderOf(e.to)})`);
    assert.deepEqual(violations, []);
  });

  it("lets the built-in tool sets load only the package's entries, as a user's tools module does", () => {
    const entries = new Set(publicEntries());
    const violations = files
      .filter((e) => folderOf(e.from) === 'server/tools' && folderOf(e.to) !== 'server/tools')
      .filter((e) => !entries.has(e.to))
      .map(describeEdge);
    assert.deepEqual(violations, []);
  });

  it('has no cycles between folders', () => {
    const arrows = new Map<string, Set<string>>();
    for (const edge of files) {
      const [from, to] = [folderOf(edge.from), folderOf(edge.to)];
      if (from !== to) arrows.set(from, (arrows.get(from) ?? new Set()).add(to));
    }
    const folders = new Set(graph.files.map(folderOf));
    assert.deepEqual(
      cyclesOf(folders, (folder) => arrows.get(folder) ?? []),
      [],
    );
  });

  it('has no cycles between files, type-only imports included', () => {
    // A cycle of values works only while no file of it uses another at load time; a cycle of
    // types still ties two files into one unit. Either way one of them should own the shared part.
    const arrows = new Map<string, Set<string>>();
    for (const edge of files)
      arrows.set(edge.from, (arrows.get(edge.from) ?? new Set()).add(edge.to));
    assert.deepEqual(
      cyclesOf(graph.files, (file) => arrows.get(file) ?? []),
      [],
    );
  });

  it('has no file cycles anywhere in the repository (src, test, bench, chaos, scripts, examples)', () => {
    const repository = readRepositoryGraph(resolve('.'), REPOSITORY_FOLDERS);
    const arrows = new Map<string, Set<string>>();
    for (const edge of repository.edges.filter((e) => e.kind === 'file'))
      arrows.set(edge.from, (arrows.get(edge.from) ?? new Set()).add(edge.to));
    assert.ok(repository.files.includes('chaos/expect.ts'), 'the graph reads chaos/');
    assert.ok(repository.files.includes('scripts/run-tests.mjs'), 'the graph reads scripts/');
    assert.deepEqual(
      cyclesOf(repository.files, (file) => arrows.get(file) ?? []),
      [],
    );
  });

  it('loads each npm package only from the folders that own it, and only declared ones', () => {
    const declared = { ...manifest.dependencies, ...manifest.peerDependencies };
    const violations: string[] = [];
    for (const edge of graph.edges.filter((e) => e.kind === 'package')) {
      const folder = folderOf(edge.from);
      if (!(PACKAGES[folder] ?? []).includes(edge.to)) violations.push(describeEdge(edge));
      if (!(edge.to in declared)) violations.push(`${describeEdge(edge)}: not a dependency`);
    }
    assert.deepEqual(violations, []);
  });

  it('keeps the task model, the protocol and the store port free of I/O modules', () => {
    const violations = graph.edges
      .filter((e) => e.kind === 'builtin' && folderOf(e.from) in PURE_BUILTINS)
      .filter((e) => !(PURE_BUILTINS[folderOf(e.from)] ?? []).includes(e.to))
      .map(describeEdge);
    assert.deepEqual(violations, []);
  });

  it('loads optional peers only when their store or feature is used', () => {
    const violations: string[] = [];
    for (const entry of [...publicEntries(), 'cli/main.ts']) {
      const loaded = eagerClosure(graph.edges, entry);
      for (const edge of graph.edges) {
        if (!loaded.has(edge.from) || edge.lazy || edge.typeOnly) continue;
        const allowed = ENTRY_DRIVERS[entry] ?? [];
        if (OPTIONAL_PEERS.includes(edge.to) && !allowed.includes(edge.to)) {
          violations.push(`${entry}: ${describeEdge(edge)}`);
        }
      }
    }
    assert.deepEqual(violations, []);
  });

  it("reads no private field of the MCP SDK (only `_meta` starts with '_')", () => {
    // `x._field`, `x['_field']`, or a cast type naming `_field:` (how private fields were read).
    const underscored =
      /\??\.(_[A-Za-z]\w*)|\[\s*['"](_[A-Za-z]\w*)['"]\s*\]|[{;,]\s*(_[A-Za-z]\w*)\??:/g;
    const violations: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const text = readFileSync(resolve(SRC, file), 'utf8');
      for (const match of text.matchAll(underscored)) {
        const name = match[1] ?? match[2] ?? match[3];
        if (name !== '_meta') violations.push(`${file}: ${match[0].trim()}`);
      }
    }
    assert.deepEqual(violations, []);
  });
});
