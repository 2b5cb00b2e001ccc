import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import type { Child } from '../helpers/child.js';
import {
  assertExactSlices,
  assertShortened,
  assertUnknownTo,
  readWhole,
  type Block,
} from '../helpers/shortened.js';
import { startServing } from '../helpers/taskrail.js';
import { sdkClient, TOKENS } from '../listen/resource-listen.js';
import { tempDir } from '../stores/temp-dir.js';
import { BIG_ROWS, BIG_TEXT } from './fixtures/big-text.js';
import { CLI } from './support.js';

const UPSTREAM = resolve(new URL('./fixtures/big-upstream.js', import.meta.url).pathname);
/** The proxy's default `--max-result-chars`. */
const MAX = 40_000;
/** The proxy's default `--max-read-chars`: one page of a read. */
const READ_MAX = 8 * 1024 * 1024;

/**
 * `taskrail proxy` in front of a stdio upstream whose results are far bigger than a host takes
 * whole: the proxy hands them out shortened like any taskrail tool, and reads them back whole.
 */
describe('taskrail proxy shortens big upstream results', () => {
  const dir = tempDir('taskrail-proxy-big-');
  let proxy: Child;
  let url: string;

  before(async () => {
    const tokens = join(dir.path, 'tokens.json');
    writeFileSync(tokens, JSON.stringify(TOKENS));
    const args = ['proxy', '--port', '0', '--store', `sqlite:${join(dir.path, 'tasks.db')}`];
    ({ child: proxy, url } = await startServing(
      [
        ...args,
        '--auth',
        `tokens:${tokens}`,
        '--log-level',
        'warn',
        '--',
        process.execPath,
        UPSTREAM,
      ],
      { main: CLI },
    ));
  });
  after(async () => {
    await proxy?.kill('SIGTERM');
    dir.remove();
  });

  for (const wire of ['2025-11-25', '2026-07-28'] as const) {
    describe(`on the ${wire} wire`, () => {
      let alice: Client;
      let bob: Client;
      before(async () => {
        alice = await sdkClient(url, 'tok-a', wire);
        bob = await sdkClient(url, 'tok-b', wire);
      });
      after(async () => {
        await alice.close();
        await bob.close();
      });

      it('hands out a 200,000-character text shortened and reads it back whole in pages', async () => {
        const result = await alice.callTool({ name: 'big_text', arguments: {} });
        const link = assertShortened(result, BIG_TEXT, MAX);
        const uri = link.uri as string;
        await assertExactSlices(alice, uri, BIG_TEXT);
        assert.equal(await readWhole(alice, uri, READ_MAX), BIG_TEXT);
        await assertUnknownTo(bob, uri);
      });

      it('moves a big structuredContent to /structured unless the tool has an outputSchema', async () => {
        const rows = { rows: BIG_ROWS };
        const moved = await alice.callTool({ name: 'big_rows', arguments: {} });
        assert.equal(moved.structuredContent, undefined);
        const link = assertShortened(moved, JSON.stringify(rows), MAX, 'structured');
        assert.deepEqual(JSON.parse(await readWhole(alice, link.uri as string, READ_MAX)), rows);
        const checked = await alice.callTool({ name: 'big_checked', arguments: {} });
        assert.deepEqual(checked.structuredContent, rows);
        const content = checked.content as Block[];
        assert.ok(!content.some((block) => block.uri?.endsWith('/structured') === true));
      });
    });
  }
});
