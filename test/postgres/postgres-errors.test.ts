import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storeError } from '../../src/stores/postgres/errors.js';
import { isStoreUnavailable } from '../../src/task/errors.js';

/** A driver error as node-postgres raises it: a message and a SQLSTATE `code`. */
function pgError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('postgres store errors: what is the database’s trouble (retried) and what is not', () => {
  const retried: [string, string][] = [
    ['08006', 'connection failure'],
    ['53100', 'could not extend file: No space left on device'],
    ['53300', 'sorry, too many clients already'],
    ['57P01', 'terminating connection due to administrator command'],
    ['57014', 'canceling statement due to statement timeout'],
    ['55P03', 'canceling statement due to lock timeout'],
    ['58030', 'could not write to file'],
    ['40001', 'could not serialize access due to concurrent update'],
    ['40P01', 'deadlock detected'],
  ];
  for (const [code, message] of retried) {
    it(`${code} (${message}) becomes STORE_UNAVAILABLE, keeping the cause`, () => {
      const raw = pgError(code, message);
      const mapped = storeError(raw, 'postgres task store db');
      assert.ok(isStoreUnavailable(mapped), String(mapped));
      assert.equal((mapped as Error).cause, raw);
      assert.ok((mapped as Error).message.includes(message));
    });
  }

  it('a dropped socket without a SQLSTATE is the database being unreachable', () => {
    const mapped = storeError(new Error('Connection terminated unexpectedly'), 'db');
    assert.ok(isStoreUnavailable(mapped));
    assert.match((mapped as Error).message, /db is unreachable/);
  });

  for (const [code, message] of [
    ['23505', 'duplicate key value violates unique constraint'],
    ['42P01', 'relation "tasks" does not exist'],
    ['22P02', 'invalid input syntax for type json'],
  ] as const) {
    it(`${code} (${message}) passes through as the statement's own error`, () => {
      const raw = pgError(code, message);
      assert.equal(storeError(raw, 'db'), raw);
    });
  }
});
