/**
 * `taskrail serve` processes on one shared store, with the tools of
 * test/fixtures/resource-tools.ts, bearer tokens for alice and bob, and the printer's gates
 * as files the test creates; and the cases that kill one and read from another.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { taskResourceUri } from '../../src/client/index.js';
import { BURST } from '../fixtures/printer.js';
import { REPORT, REPORT_OUTPUT } from '../fixtures/resource-tools.js';
import { sdkClient, startPrinter, TOKENS } from '../listen/resource-listen.js';
import { tempDir } from '../stores/temp-dir.js';
import type { Child } from './child.js';
import {
  assertExactSlices,
  assertShortened,
  assertUnknownTo,
  readPage,
  readWhole,
} from './shortened.js';
import { startServing, type Serving } from './taskrail.js';
import { waitFor } from './wait.js';

const TOOLS = new URL('../fixtures/resource-tools.js', import.meta.url).pathname;

export interface ResourceServers {
  /** `taskrail serve` on the store; `--no-worker` leaves the running to the others. */
  serve(options?: { noWorker?: boolean }): Promise<Serving>;
  /** Opens the printer's gate `name` in every process. */
  release(name: string): void;
  /** Stops what is still running and removes the files. */
  close(): Promise<void>;
}

export function resourceServers(store: string): ResourceServers {
  const dir = tempDir('taskrail-resources-');
  const gates = join(dir.path, 'gates');
  mkdirSync(gates);
  const tokens = join(dir.path, 'tokens.json');
  writeFileSync(tokens, JSON.stringify(TOKENS));
  const children: Child[] = [];
  return {
    async serve({ noWorker = false } = {}) {
      const args = ['serve', '--port', '0', '--store', store, '--tools', TOOLS];
      // Reads come in pages of the default result size, as they did before whole reads.
      const extra = [
        '--auth',
        `tokens:${tokens}`,
        '--log-level',
        'warn',
        '--max-read-chars',
        '40000',
      ];
      const serving = await startServing(
        [...args, ...extra, ...(noWorker ? ['--no-worker'] : [])],
        { env: { PRINTER_GATES: gates }, timeoutMs: 20_000 },
      );
      children.push(serving.child);
      return serving;
    },
    release: (name) => writeFileSync(join(gates, name), ''),
    async close() {
      for (const child of children) await child.stop();
      dir.remove();
    },
  };
}

/** A store URL for one describe block, and how to clear it after. */
export interface SharedStore {
  url: string;
  dispose(): Promise<void>;
}

const MAX = 40_000;
const BURST_TEXT = Array.from({ length: BURST }, (_, i) => `burst ${i}\n`).join('');

/**
 * Output and a shortened result written by a `serve` process that is then SIGKILLed are read
 * whole, in exact pages, from another `serve` process on the same store — owner-only there too.
 */
export function describeResourcesAfterKill(storeName: string, open: () => SharedStore): void {
  describe(`task resources after kill -9 of the server (${storeName})`, () => {
    let store: SharedStore;
    let servers: ResourceServers;
    before(() => {
      store = open();
      servers = resourceServers(store.url);
    });
    after(async () => {
      await servers.close();
      await store.dispose();
    });

    it('reads output and a whole result from another server process', async () => {
      const killed = await servers.serve();
      const first = await sdkClient(killed.url, 'tok-a', '2026-07-28');
      const report = await first.callTool({ name: 'report', arguments: {} });
      const resultUri = assertShortened(report, REPORT, MAX).uri as string;
      const outputUri = resultUri.replace(/\/result$/, '/output');
      const printerUri = taskResourceUri(await startPrinter(killed.url, 'kill', 'tok-a'), 'output');
      await waitFor(
        'the burst written',
        async () =>
          (await readPage(first, printerUri)).text.endsWith(`burst ${BURST - 1}\n`) || undefined,
      );
      await first.close();
      await killed.child.kill('SIGKILL');

      const other = await servers.serve({ noWorker: true });
      const alice = await sdkClient(other.url, 'tok-a', '2025-11-25');
      const bob = await sdkClient(other.url, 'tok-b', '2025-11-25');
      try {
        assert.equal(await readWhole(alice, outputUri, MAX), REPORT_OUTPUT);
        await assertExactSlices(alice, resultUri, REPORT);
        assert.equal(await readWhole(alice, resultUri, MAX), REPORT);
        assert.equal(
          await readWhole(alice, printerUri, MAX),
          BURST_TEXT,
          'what the killed run wrote',
        );
        for (const uri of [resultUri, printerUri]) await assertUnknownTo(bob, uri);
      } finally {
        await alice.close();
        await bob.close();
      }
    });
  });
}
