import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TaskrailClient, defaultHome } from '../../src/client/index.js';

describe('the ledger folder of the library', () => {
  it('is $TASKRAIL_HOME when set, as the README says, and ~/.taskrail otherwise', () => {
    const home = mkdtempSync(join(tmpdir(), 'taskrail-home-'));
    const before = process.env['TASKRAIL_HOME'];
    process.env['TASKRAIL_HOME'] = home;
    try {
      const client = new TaskrailClient({ url: 'http://127.0.0.1:9/mcp' });
      try {
        assert.equal(client.ledger.path, join(home, 'ledger.db'));
        assert.ok(existsSync(join(home, 'ledger.db')));
      } finally {
        client.close();
      }
      assert.match(defaultHome({}), /\.taskrail$/);
      assert.equal(defaultHome({ TASKRAIL_HOME: ' ' }), defaultHome({}));
    } finally {
      if (before === undefined) delete process.env['TASKRAIL_HOME'];
      else process.env['TASKRAIL_HOME'] = before;
      rmSync(home, { recursive: true, force: true });
    }
  });
});
