import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

/**
 * The run-time exports of every package entry point, listed. A change to a public API is a
 * decision: edit this listing in the same commit, and say why in the CHANGELOG. (Type-only
 * exports are checked by the packed-package test, which compiles against every entry.)
 *
 * Left out on purpose: the record constructor, `transitions`, `LocalExecutor` and `ParkSignal`
 * (the runtime's internals), the store classes whose declarations name driver types
 * (`RedisTaskStore`, `PostgresTaskStore`: open them with `openRedisStore`/`openPostgresStore`),
 * and the CLI's helpers for serve's executor and fleet.
 */
const PUBLIC_API: Record<string, readonly string[]> = {
  '.': [
    'RPC',
    'RpcError',
    'TASK_STATUSES',
    'TRANSITIONS',
    'TaskEvents',
    'TaskRuntime',
    'TaskrailError',
    'canTransition',
    'installRejectionGuard',
    'isExpired',
    'isPlausibleTaskId',
    'isRpcError',
    'isStoreUnavailable',
    'isTaskStatus',
    'isTerminal',
    'isoTime',
    'newTaskId',
    'normalizeTaskOption',
    'pendingInputRequests',
    'stderrLogger',
    'systemClock',
  ],
  './server': [
    'ANONYMOUS',
    'DEFAULT_MAX_BODY_BYTES',
    'RPC',
    'RpcError',
    'SERVER_TROUBLE_MESSAGE',
    'TASKS_EXTENSION',
    'createTaskServer',
    'loadTokenFile',
    'serveStdio',
  ],
  './client': [
    'Ledger',
    'MemoryLedger',
    'PROTOCOL_VERSION',
    'SchemaChecker',
    'TASKS_EXTENSION_ID',
    'TaskResources',
    'TaskRpc',
    'TaskrailClient',
    'TaskrailClientError',
    'clientOptionsFromEnv',
    'createHttpDispatch',
    'defaultHome',
    'encodeHeaderValue',
    'exitCodeFor',
    'inputCapabilities',
    'isClientError',
    'isFinal',
    'isShortened',
    'parseTaskResourceUri',
    'resultText',
    'resumeLedger',
    'shortenedLinks',
    'taskResourceUri',
    'watchedElsewhere',
    'withEnvelope',
    'withRange',
  ],
  './testing': ['createFakeClock', 'taskStoreContract', 'waitFor'],
  './stores/memory': ['MemoryTaskStore'],
  './stores/sqlite': ['SCHEMA_VERSION', 'SqliteTaskStore'],
  './stores/redis': ['DEFAULT_PREFIX', 'evictionWarning', 'openRedisStore', 'parseRedisUrl'],
  './stores/postgres': [
    'DEFAULT_SCHEMA',
    'SCHEMA_VERSION',
    'openPostgresStore',
    'parsePostgresUrl',
  ],
  './executors/bullmq': ['BullmqExecutor', 'QUEUE_NAME', 'createBullmqExecutor'],
  './executors/graphile-worker': ['GraphileExecutor', 'TASK_IDENTIFIER', 'createGraphileExecutor'],
};

const ROOT = new URL('../../', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as {
  exports: Record<string, { import?: string } | string>;
};

/** The compiled source of an entry: `./dist/x/index.js` in package.json is `.build/src/x/index.js`. */
function builtEntry(target: { import?: string } | string): URL {
  const path = typeof target === 'string' ? target : (target.import ?? '');
  return new URL(path.replace(/^\.\/dist\//, 'src/'), new URL('.build/', ROOT));
}

describe('public API', () => {
  const entries = Object.entries(manifest.exports).filter(([key]) => key !== './package.json');

  it('lists every entry point package.json exports, and no other', () => {
    assert.deepEqual(entries.map(([key]) => key).sort(), Object.keys(PUBLIC_API).sort());
  });

  for (const [key, target] of entries) {
    it(`${key} exports exactly its listing`, async () => {
      const module = (await import(builtEntry(target).href)) as Record<string, unknown>;
      assert.deepEqual(Object.keys(module).sort(), [...(PUBLIC_API[key] ?? [])].sort());
    });
  }
});
