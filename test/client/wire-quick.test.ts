import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CallToolResultV2Schema,
  CreateTaskResultV2Schema,
  GetTaskResultV2Schema,
  InputRequestsV2Schema,
} from '@modelcontextprotocol/ext-tasks/core/v2';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { TaskrailClientError } from '../../src/client/errors.js';
import { SchemaChecker } from '../../src/client/schema-check.js';
import { quickCreateTaskResult, quickTaskState } from '../../src/client/wire-quick.js';
import { parsePushedTask, parseTaskState, parseToolCallReply } from '../../src/client/wire.js';

type Json = Record<string, unknown>;

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** The schema-only parses as they were before the quick checks: the oracle. */
function check(schema: { safeParse(v: unknown): unknown }, value: unknown, what: string): Json {
  const parsed = schema.safeParse(value) as
    { success: true; data: Json } | { success: false; error: { message: string } };
  if (parsed.success) return parsed.data;
  throw new TaskrailClientError(
    'PROTOCOL',
    `the server sent an invalid ${what}: ${parsed.error.message}`,
  );
}

function strip(result: Json): Json {
  const { resultType: _ignored, ...rest } = result;
  return rest;
}

function oracleTaskState(result: Json): Json {
  const nested = result.result;
  const isObject = nested !== null && typeof nested === 'object' && !Array.isArray(nested);
  const patched =
    result.status === 'completed' && isObject
      ? { ...result, result: { resultType: 'complete', ...(nested as Json) } }
      : result;
  const task = check(GetTaskResultV2Schema, patched, 'GetTaskResult');
  if (task.status === 'completed') {
    check(CallToolResultV2Schema, (patched as Json).result, 'completed task result');
    return { ...task, result: strip(nested as Json) };
  }
  if (task.status === 'input_required')
    check(InputRequestsV2Schema, task.inputRequests, 'inputRequests');
  return task;
}

function oracleToolCallReply(result: Json): Json {
  const resultType = result.resultType ?? 'complete';
  if (resultType === 'task')
    return { kind: 'task', task: check(CreateTaskResultV2Schema, result, 'CreateTaskResult') };
  if (resultType !== 'complete' && resultType !== 'input_required')
    return parseToolCallReply(result) as unknown as Json; // refused before any schema
  const parsed = check(CallToolResultV2Schema, { ...result, resultType }, 'CallToolResult');
  if (parsed.resultType === 'input_required') return parseToolCallReply(result) as unknown as Json; // not a quick shape
  return { kind: 'complete', result: strip(result) };
}

function outcome(run: () => unknown): { value: unknown } | { error: string } {
  try {
    return { value: run() };
  } catch (error) {
    return { error: `${(error as TaskrailClientError).code}: ${(error as Error).message}` };
  }
}

const TIMES = { createdAt: '2026-01-01T00:00:00Z', lastUpdatedAt: '2026-01-01T00:00:01Z' };
const BASE = { taskId: 't-1', ...TIMES, ttlMs: 60_000, pollIntervalMs: 1 };
const TEXT = { type: 'text', text: 'done' };

/** Field values a server might get wrong, each tried in every field. */
const ODD: unknown[] = [
  null,
  0,
  1,
  1.5,
  -1,
  2 ** 53,
  '',
  'x',
  true,
  [],
  {},
  { a: 1 },
  [1],
  'working',
  'complete',
  'task',
  TEXT,
  [TEXT],
  [null],
  [{ type: 'text' }],
  [{ type: 'text', text: 1 }],
  [{ type: 'text', text: 'a', annotations: { priority: 2 } }],
  [{ type: 'text', text: 'a', annotations: { priority: 0.5 } }],
  [{ type: 'text', text: 'a', _meta: [] }],
  [{ type: 'text', text: 'a', _meta: { k: 1 }, extra: [1] }],
  [{ type: 'image', data: 'AA==', mimeType: 'image/png' }],
  [{ type: 'image', data: 'AA==' }],
];

/** Every well-formed message with each field removed, replaced by each odd value, or added. */
function variants(base: Json, fields: string[]): Json[] {
  const out: Json[] = [base];
  for (const field of [...new Set([...Object.keys(base), ...fields])]) {
    const { [field]: _removed, ...without } = base;
    out.push(without);
    for (const value of ODD) out.push({ ...base, [field]: value });
  }
  return out;
}

function completed(result: Json): Json {
  return { ...BASE, status: 'completed', result, resultType: 'complete' };
}

const RESULT_FIELDS = ['content', 'isError', 'structuredContent', '_meta', 'resultType', 'other'];
const TASK_FIELDS = [...Object.keys(BASE), 'status', 'statusMessage', 'resultType', '_meta'];

describe('quick checks of task shapes agree with the ext-tasks schemas', () => {
  it('a task state: the same task, or the same error, on every variant', () => {
    const bases = [
      { ...BASE, status: 'working', resultType: 'complete' },
      { ...BASE, status: 'cancelled', statusMessage: 'stopped', resultType: 'complete' },
      { ...BASE, ttlMs: null, status: 'working', resultType: 'complete', _meta: { a: [1] } },
      completed({ content: [] }),
      completed({ content: [TEXT], structuredContent: { n: 1 }, isError: false, _meta: {} }),
    ];
    const messages = bases.flatMap((base) => variants(base, TASK_FIELDS));
    for (const result of [{ content: [TEXT] }, { content: [], isError: true }])
      for (const variant of variants(result, RESULT_FIELDS)) messages.push(completed(variant));
    for (const message of messages) {
      const expected = outcome(() => oracleTaskState(message));
      assert.deepStrictEqual(
        outcome(() => parseTaskState(message)),
        expected,
      );
      const pushed = { ...message, _meta: { 'io.modelcontextprotocol/subscriptionId': 'l' } };
      const { _meta: _own, ...params } = message;
      const readAsPush = outcome(() => oracleTaskState({ ...params, resultType: 'complete' }));
      assert.deepStrictEqual(
        outcome(() => parsePushedTask(pushed)),
        readAsPush,
      );
    }
    for (const base of bases) assert.notEqual(quickTaskState(base), undefined);
  });

  it('a tools/call answer: the same CreateTaskResult or result, or the same error', () => {
    const created = { ...BASE, status: 'working', resultType: 'task' };
    const messages = [
      ...variants(created, TASK_FIELDS),
      ...variants({ ...created, _meta: { k: 'v' }, statusMessage: 'queued' }, []),
      ...variants({ content: [TEXT], structuredContent: { n: 1 } }, RESULT_FIELDS),
      ...variants({ resultType: 'complete', content: [] }, RESULT_FIELDS),
    ];
    for (const message of messages) {
      const expected = outcome(() => oracleToolCallReply(message));
      assert.deepStrictEqual(
        outcome(() => parseToolCallReply(message)),
        expected,
      );
    }
    assert.notEqual(quickCreateTaskResult(created), undefined);
  });

  it('refuses malformed pushes and replies with the schema messages', () => {
    const noText = completed({ content: [{ type: 'text' }] });
    assert.throws(() => parseTaskState(noText), /invalid completed task result: .*"content",\s*0/s);
    const badTtl = { ...BASE, ttlMs: 1.5, status: 'working', resultType: 'complete' };
    assert.throws(() => parseTaskState(badTtl), /invalid GetTaskResult: .*ttlMs/s);
    const noId = { ...TIMES, ttlMs: null, status: 'working', resultType: 'task' };
    assert.throws(() => parseToolCallReply(noId), /invalid CreateTaskResult: .*taskId/s);
    assert.throws(
      () => parseToolCallReply({ content: [{ type: 'text', text: 1 }] }),
      /invalid CallToolResult/,
    );
  });
});

describe('the schema checker without ajv for argument-less tools', () => {
  it('says what ajv says, and builds no ajv for them', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    const problems = (schema: Json, value: unknown): number =>
      ajv.validate(schema, value) ? 0 : (ajv.errors ?? []).length;
    const schemas: Json[] = [
      { type: 'object' },
      { type: 'object', properties: {} },
      { type: 'object', properties: {}, additionalProperties: {} },
      { type: 'object', additionalProperties: true, $schema: DIALECT },
      { type: 'object', additionalProperties: false },
      { type: 'object', properties: { a: { type: 'string' } } },
      { type: 'object', properties: {}, required: ['a'] },
      { type: 'array' },
    ];
    const values: unknown[] = [{}, { a: 1 }, { a: 'x' }, [], null, 'x', 1];
    const checker = new SchemaChecker();
    for (const schema of schemas.slice(0, 4))
      for (const value of values.slice(0, 3)) assert.deepEqual(checker.check(schema, value), []);
    assert.equal(checker.cachedSchemas, 0, 'no schema was compiled');
    for (const schema of schemas)
      for (const value of values)
        assert.equal(checker.check(schema, value).length, problems(schema, value));
  });
});
