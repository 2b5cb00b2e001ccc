import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { recordToParams } from '../../src/stores/sqlite/rows.js';
import { newTaskRecord, type JsonObject } from '../../src/task/record.js';

const record = (meta: JsonObject) =>
  newTaskRecord(
    {
      id: 'rows-test',
      principal: 'alice',
      tool: 'noop',
      arguments: {},
      ttlMs: null,
      pollIntervalMs: 1000,
      meta,
    },
    1_000,
  );

describe('SQLite rows: object columns written without the serializer when empty', () => {
  it('writes what JSON.stringify writes, for empty and non-empty objects alike', () => {
    const withToJson = new (class {
      toJSON() {
        return { from: 'toJSON' };
      }
    })() as unknown as JsonObject;
    const inherited = Object.create({ inherited: 1 }) as JsonObject;
    const withSymbol = { [Symbol('hidden')]: 1 } as unknown as JsonObject;
    for (const meta of [{}, { a: [1, { b: null }] }, withToJson, inherited, withSymbol]) {
      assert.equal(recordToParams(record(meta)).meta, JSON.stringify(meta));
    }
    const row = recordToParams(record({}));
    assert.equal(row.input_requests, '{}');
    assert.equal(row.input_responses, '{}');
  });
});
