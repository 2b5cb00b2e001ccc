import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FILE_TEXT } from '../fixtures/structured-tools.js';
import { runCli, startServe, tempDir, type Serve } from '../client/support.js';

const TOOLS = resolve('.build/test/fixtures/structured-tools.js');

/** Issue 30 item 3: a result and the server's JSON copy of its structuredContent, shown once. */
describe('taskrail call prints a structured result once', () => {
  const dir = tempDir('structured');
  let serve: Serve;
  const home = join(dir.path, 'home');

  before(async () => {
    serve = await startServe(dir.path, ['--tools', TOOLS]);
  });
  after(async () => {
    await serve.stop();
    dir.remove();
  });

  it('prints the text, not the JSON copy after it', async () => {
    for (const flags of [[], ['--no-tasks']]) {
      const r = await runCli(['call', serve.url, 'read_like', ...flags], home);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `${FILE_TEXT}\n`);
    }
  });

  it('--json keeps the raw result, copy included', async () => {
    const r = await runCli(['call', serve.url, 'read_like', '--json'], home);
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout) as { content: { text: string }[] };
    assert.deepEqual(
      result.content.map((block) => block.text),
      [FILE_TEXT, JSON.stringify({ content: FILE_TEXT })],
    );
  });

  it('a result with nothing but structuredContent shows it once, as indented JSON', async () => {
    const r = await runCli(['call', serve.url, 'structured_only'], home);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${JSON.stringify({ answer: 42 }, null, 2)}\n`);
  });
});
