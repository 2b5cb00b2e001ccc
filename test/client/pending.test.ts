import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ledger, MemoryLedger, type TaskLedger } from '../../src/client/index.js';
import { tempDir } from './support.js';

const ledgers: Array<[string, () => { ledger: TaskLedger; done(): void }]> = [
  ['MemoryLedger', () => ({ ledger: new MemoryLedger(), done: () => undefined })],
  [
    'Ledger (SQLite)',
    () => {
      const dir = tempDir('pending');
      const ledger = Ledger.open(dir.path);
      return { ledger, done: () => (ledger.close(), dir.remove()) };
    },
  ],
];

for (const [name, open] of ledgers) {
  describe(`${name}: pending calls`, () => {
    it('keeps the first write of a key, lists per server oldest first, drops on reply', () => {
      const { ledger, done } = open();
      try {
        const a = { key: 'k1', server: 'http://a/mcp', tool: 't', arguments: { n: 1 } };
        ledger.recordPending(a);
        ledger.recordPending({ ...a, arguments: { n: 2 } });
        ledger.recordPending({ ...a, key: 'k2', bearer: 'secret' });
        ledger.recordPending({ ...a, key: 'k3', server: 'http://b/mcp' });
        const pending = ledger.pending('http://a/mcp');
        assert.deepEqual(
          pending.map(({ createdAt: _at, ...call }) => call),
          [
            { key: 'k1', server: 'http://a/mcp', tool: 't', arguments: { n: 1 } },
            { key: 'k2', server: 'http://a/mcp', tool: 't', arguments: { n: 1 }, bearer: 'secret' },
          ],
        );
        ledger.dropPending('k1');
        ledger.dropPending('k1');
        assert.deepEqual(
          ledger.pending('http://a/mcp').map((call) => call.key),
          ['k2'],
        );
        assert.deepEqual(
          ledger.pending('http://b/mcp').map((call) => call.key),
          ['k3'],
        );
      } finally {
        done();
      }
    });
  });
}
