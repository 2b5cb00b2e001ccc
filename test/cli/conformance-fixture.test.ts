import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli, startServe, tempDir, type Serve } from '../client/support.js';

/**
 * The conformance fixtures live in the clone's conformance/ folder, not in dist/; the CLI of a
 * clone still serves them as `--tools conformance`, as scripts/conformance.sh runs it.
 */
describe('serve --tools conformance from a clone', () => {
  const dir = tempDir('cli-conformance');
  let serve: Serve;
  before(async () => {
    serve = await startServe(dir.path, ['--tools', 'conformance']);
  });
  after(async () => {
    await serve.stop();
    dir.remove();
  });

  it('serves the fixtures beside the demo tools', async () => {
    const listed = await runCli(['tools', serve.url, '--json'], join(dir.path, 'home'));
    assert.equal(listed.code, 0, listed.stderr);
    const names = (JSON.parse(listed.stdout) as { tools: { name: string }[] }).tools.map(
      (tool) => tool.name,
    );
    assert.ok(names.includes('test_simple_text'), names.join(', '));
    assert.ok(names.includes('greet'), names.join(', '));
  });
});
