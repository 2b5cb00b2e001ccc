import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Child } from '../helpers/child.js';
import { startServing } from '../helpers/taskrail.js';
import { installPacked, ROOT, run, TSC } from './packed.js';

/**
 * Issue 30 item 9: README's "Use it in your project" followed to the letter. The package.json,
 * the tsconfig.json and the tool example are read from README.md itself, so the README cannot
 * drift from what compiles and serves.
 */
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The fenced blocks of one language in the `## heading` section of README.md. */
function fencedBlocks(heading: string, language: string): string[] {
  const start = README.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `README.md has no "## ${heading}" section`);
  const end = README.indexOf('\n## ', start + 1);
  const section = README.slice(start, end < 0 ? undefined : end);
  const fence = new RegExp('^```' + language + '\\n([\\s\\S]*?)^```$', 'gm');
  return [...section.matchAll(fence)].map((match) => match[1]!);
}

/**
 * `installPacked` skips install scripts, so better-sqlite3 (which `taskrail call`'s ledger uses)
 * gets the native build the clone's own `npm install` made, as a user's install would build it.
 */
function copySqliteBuild(app: string): void {
  const version = (dir: string) =>
    (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  const ours = join(ROOT, 'node_modules', 'better-sqlite3');
  const theirs = join(app, 'node_modules', 'better-sqlite3');
  assert.equal(version(theirs), version(ours), 'the app got another better-sqlite3 than the clone');
  cpSync(join(ours, 'build', 'Release'), join(theirs, 'build', 'Release'), { recursive: true });
}

describe("the README's own-project recipe, from npm pack to a tool call", () => {
  const work = mkdtempSync(join(tmpdir(), 'taskrail-own-'));
  let app = '';
  let serve: Child | undefined;

  before(async () => {
    const [packageJson, tsconfig] = fencedBlocks('Use it in your project', 'json');
    assert.ok(packageJson && tsconfig, 'the section shows a package.json and a tsconfig.json');
    app = await installPacked(work, JSON.parse(packageJson) as object, ['zod', '@types/node@20']);
    copySqliteBuild(app);
    writeFileSync(join(app, 'tsconfig.json'), tsconfig);
    const tools = fencedBlocks('Serve your own tools', 'ts').find((code) =>
      code.startsWith('// tools.ts'),
    );
    assert.ok(tools, 'README.md shows tools.ts under "Serve your own tools"');
    writeFileSync(join(app, 'tools.ts'), tools);
  });

  after(async () => {
    await serve?.kill('SIGTERM');
    rmSync(work, { recursive: true, force: true });
  });

  it('compiles the example with the tsconfig.json from the README', async () => {
    const result = await run(process.execPath, [TSC, '-p', app], { cwd: app }).catch(
      (error: { stdout?: string }) => ({ stdout: error.stdout ?? String(error) }),
    );
    assert.equal(result.stdout.trim(), '', 'tsc reported errors');
    assert.ok(readFileSync(join(app, 'dist', 'tools.js'), 'utf8').includes('count_words'));
  });

  it('serves dist/tools.js with the installed taskrail and answers a call', async () => {
    const cli = join(app, 'node_modules', 'taskrail', 'dist', 'cli', 'main.js');
    const serveArgs = ['serve', '--port', '0', '--store', 'memory:', '--tools', './dist/tools.js'];
    const serving = await startServing(serveArgs, { main: cli, cwd: app });
    serve = serving.child;
    const url = serving.url;
    const args = JSON.stringify({ text: 'one two three\n\nfour five' });
    const call = await run(process.execPath, [cli, 'call', url, 'count_words', '--args', args], {
      cwd: app,
      env: { ...process.env, TASKRAIL_HOME: join(work, 'home') },
      timeout: 60_000,
    });
    assert.equal(call.stdout, '5 words\n');
  });
});
