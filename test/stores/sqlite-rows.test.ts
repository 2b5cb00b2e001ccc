import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LAZY_ARGUMENTS_CHARS } from '../../src/stores/sqlite/lazy-arguments.js';
import { recordToParams, rowToRecord } from '../../src/stores/sqlite/rows.js';
import { newTaskRecord, type JsonObject } from '../../src/task/record.js';

const record = (meta: JsonObject, args: JsonObject = {}) =>
  newTaskRecord(
    {
      id: 'rows-test',
      principal: 'alice',
      tool: 'noop',
      arguments: args,
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

describe('SQLite rows: big arguments parsed at their first read', () => {
  const argumentsProperty = (task: object) => Object.getOwnPropertyDescriptor(task, 'arguments');

  it('builds a record without parsing arguments past the bound, and parses them once read', () => {
    const big = { text: 'x'.repeat(LAZY_ARGUMENTS_CHARS) };
    const task = rowToRecord(recordToParams(record({}, big)));
    assert.equal(typeof argumentsProperty(task)?.get, 'function', 'not parsed yet');
    const read = task.arguments;
    assert.deepEqual(read, big);
    assert.equal(argumentsProperty(task)?.value, read, 'a plain property from then on');
    assert.equal(task.arguments, read, 'parsed once');
  });

  it('reads the arguments of a frozen record at each read, and refuses to replace them', () => {
    const big = { text: 'x'.repeat(LAZY_ARGUMENTS_CHARS) };
    const task = Object.freeze(rowToRecord(recordToParams(record({}, big))));
    assert.deepEqual(task.arguments, big);
    assert.deepEqual(task.arguments, big);
    assert.throws(() => {
      (task as { arguments: JsonObject }).arguments = {};
    }, /read only property 'arguments'/);
  });

  it('says how to copy a record whose arguments were copied as an accessor', () => {
    const task = rowToRecord(
      recordToParams(record({}, { text: 'x'.repeat(LAZY_ARGUMENTS_CHARS) })),
    );
    const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(task)) as typeof task;
    assert.throws(() => copy.arguments, /copy records by value/);
    assert.deepEqual(task.arguments, { text: 'x'.repeat(LAZY_ARGUMENTS_CHARS) });
  });

  it('parses arguments within the bound at once', () => {
    const small = { text: 'x'.repeat(LAZY_ARGUMENTS_CHARS - 20) };
    const task = rowToRecord(recordToParams(record({}, small)));
    assert.deepEqual(argumentsProperty(task)?.value, small);
  });
});
