import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { runCli, tempDir } from '../client/support.js';

describe('--max-result-chars', () => {
  const home = tempDir('taskrail-max-result-');
  after(() => home.remove());

  for (const command of ['serve', 'worker']) {
    it(`${command} refuses a value too small to say how to read the rest`, async () => {
      const args = [command, '--max-result-chars', '10', '--store', 'memory:'];
      const result = await runCli(args, home.path);
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /--max-result-chars.*at least 1000/);
    });
  }
});
