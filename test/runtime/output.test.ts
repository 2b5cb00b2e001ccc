import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import type { ToolCatalog } from '../../src/runtime/api.js';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import type { TaskStore, TaskTextKind } from '../../src/store/port.js';
import { KEPT_APART_META, STRUCTURED_KEPT_APART_META } from '../../src/task/kept-apart.js';
import { readRange, sliceText } from '../../src/store/text.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import type { TaskRecord } from '../../src/task/record.js';
import { isTerminal } from '../../src/task/status.js';
import { waitFor } from '../helpers/wait.js';
import { tempDir } from '../stores/temp-dir.js';
import { TestTools, text } from './tools.js';

const silent = { info() {}, warn() {}, error() {} };
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function setup(
  tools: ToolCatalog,
  options: Partial<ConstructorParameters<typeof TaskRuntime>[0]> = {},
) {
  const dir = tempDir();
  const store = new SqliteTaskStore(join(dir.path, 'tasks.db'));
  const runtime = new TaskRuntime({ store, tools, logger: silent, ...options });
  cleanups.push(
    async () => dir.remove(),
    () => store.close(),
    () => runtime.stop(1000),
  );
  return { store, runtime };
}

async function settled(runtime: TaskRuntime, task: TaskRecord): Promise<TaskRecord> {
  return waitFor(`task ${task.id} to end`, async () => {
    const current = await runtime.getTask(task.id, 'alice');
    return current !== undefined && isTerminal(current.status) ? current : undefined;
  });
}

async function readAll(store: TaskStore, id: string, kind: TaskTextKind) {
  const range = readRange(0, 100_000_000);
  const stored = await store.readText(id, kind, range.offset, range.length);
  assert.ok(stored, 'the task is there');
  return sliceText(stored, 0, 100_000_000);
}

const run = (runtime: TaskRuntime, tool: string) =>
  runtime.createTask({ tool, arguments: {}, principal: 'alice' });

describe('ctx.output', () => {
  const tools = new TestTools()
    .add('printer', async (_args, ctx) => {
      for (let i = 0; i < 300; i++) await ctx.output(`line ${i}\n`);
      void ctx.output('not awaited\n');
      return text('printed');
    })
    .add('chatty', async (_args, ctx) => {
      for (let i = 0; i < 50; i++) await ctx.output(`${'x'.repeat(9)}\n`);
      return text('done');
    })
    .add('bad_output', async (_args, ctx) => {
      await ctx.output(42 as unknown as string);
      return text('unreachable');
    });

  it('keeps every line in order, the unawaited last one too, in few writes', async () => {
    const { store, runtime } = setup(tools);
    const task = await run(runtime, 'printer');
    const writes: number[] = [];
    store.events.on('task:text', (event) => void (event.id === task.id && writes.push(event.end)));
    const done = await settled(runtime, task);
    assert.equal(done.status, 'completed');
    const expected =
      Array.from({ length: 300 }, (_, i) => `line ${i}\n`).join('') + 'not awaited\n';
    const output = await readAll(store, task.id, 'output');
    assert.equal(output.text, expected);
    assert.equal(output.end, expected.length);
    assert.ok(writes.length >= 1 && writes.length < 300, `coalesced: ${writes.length} writes`);
    assert.equal(writes.at(-1), expected.length);
  });

  it('drops the oldest output past the bound and keeps counting', async () => {
    const { store, runtime } = setup(tools, { maxOutputChars: 100 });
    const task = await run(runtime, 'chatty');
    await settled(runtime, task);
    const output = await readAll(store, task.id, 'output');
    assert.equal(output.end, 500);
    assert.ok(output.dropped >= 400, `dropped ${output.dropped}`);
    assert.ok(output.text.length <= 100 && output.text.length > 0);
    assert.equal(output.start, output.dropped);
    assert.ok('x'.repeat(9).concat('\n').repeat(10).endsWith(output.text));
  });

  it('refuses a non-string with a clear error that fails the task', async () => {
    const { runtime } = setup(tools);
    const done = await settled(runtime, await run(runtime, 'bad_output'));
    assert.equal(done.status, 'failed');
  });
});

describe('big results', () => {
  const big = 'report line 😀 ü\n'.repeat(20_000);
  const tools = new TestTools()
    .add('big', () => ({
      content: [
        { type: 'text', text: big },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'text', text: 'the end' },
      ],
    }))
    .add('small', () => text('short'));

  it('keeps the whole text apart and the first part in the record', async () => {
    const { store, runtime } = setup(tools, { maxResultChars: 1000 });
    const task = await run(runtime, 'big');
    const done = await settled(runtime, task);
    assert.equal(done.status, 'completed');
    const whole = `${big}\nthe end`;
    const content = done.result?.content as { type: string; text?: string; uri?: string }[];
    assert.deepEqual(
      content.map((block) => block.type),
      ['text', 'image', 'resource_link'],
    );
    const shown = content[0]?.text ?? '';
    const uri = `taskrail://tasks/${task.id}/result`;
    assert.match(shown, /^\[This result was shortened: it has \d+ characters/);
    const first = Number(/only the first (\d+)/.exec(shown)?.[1]);
    assert.ok(shown.includes(`${uri}?offset=${first}&length=1000`), shown.slice(0, 300));
    assert.ok(shown.endsWith(`\n${whole.slice(0, first)}`));
    assert.ok(first > 300, `shows a useful first part (${first})`);
    assert.deepEqual(content[2], {
      type: 'resource_link',
      uri,
      name: `result of task ${task.id}`,
      mimeType: 'text/plain',
      size: Buffer.byteLength(whole),
    });
    assert.ok(shown.length + JSON.stringify(content[2]).length <= 1000, 'within the limit');
    assert.deepEqual((done.result?.['_meta'] as Record<string, unknown>)[KEPT_APART_META], {
      chars: whole.length,
      bytes: Buffer.byteLength(whole),
    });
    assert.equal((await readAll(store, task.id, 'result')).text, whole);
  });

  it('leaves a small result in the record alone', async () => {
    const { store, runtime } = setup(tools, { maxResultChars: 1000 });
    const task = await run(runtime, 'small');
    const done = await settled(runtime, task);
    assert.deepEqual(done.result, text('short'));
    assert.equal((await readAll(store, task.id, 'result')).end, 0);
  });
});

describe('big structuredContent', () => {
  const rows = { rows: Array.from({ length: 400 }, (_, n) => ({ n, name: `name ${n} ✓` })) };
  const json = JSON.stringify(rows);
  const note = 'a short note';
  const big = 'report line\n'.repeat(1000);
  const tools = new TestTools()
    .add('rows', () => ({
      content: [
        { type: 'text', text: note },
        { type: 'text', text: json },
      ],
      structuredContent: rows,
    }))
    .add('rows_and_text', () => ({
      content: [{ type: 'text', text: big }],
      structuredContent: rows,
    }));
  const rowsTool = tools.get('rows');
  assert.ok(rowsTool);
  const catalog = {
    get: (name: string) =>
      name === 'checked' ? { ...rowsTool, name, declaresOutputSchema: true } : tools.get(name),
  };
  type Block = { type: string; text?: string; uri?: string; mimeType?: string };
  const handedOutChars = (content: Block[]) =>
    content.reduce(
      (n, b) => n + (b.type === 'text' ? (b.text ?? '').length : JSON.stringify(b).length),
      0,
    );

  it('is kept apart, its JSON copy dropped, the rest of the text left as it was', async () => {
    const { store, runtime } = setup(catalog, { maxResultChars: 1000 });
    const done = await settled(runtime, await run(runtime, 'rows'));
    assert.equal(done.result?.['structuredContent'], undefined);
    const content = done.result?.content as Block[];
    assert.deepEqual(
      content.map((block) => block.type),
      ['text', 'text', 'resource_link'],
    );
    const uri = `taskrail://tasks/${done.id}/structured`;
    assert.match(content[0]?.text ?? '', /^\[This result's structuredContent was moved out/);
    assert.ok(content[0]?.text?.includes(`${uri}?offset=0&length=1000`));
    assert.equal(content[1]?.text, note);
    assert.deepEqual(content[2], {
      type: 'resource_link',
      uri,
      name: `structured result of task ${done.id}`,
      mimeType: 'application/json',
      size: Buffer.byteLength(json),
    });
    assert.ok(handedOutChars(content) <= 1000, 'within the limit');
    assert.deepEqual(
      (done.result?.['_meta'] as Record<string, unknown>)[STRUCTURED_KEPT_APART_META],
      {
        chars: json.length,
        bytes: Buffer.byteLength(json),
      },
    );
    assert.equal((await readAll(store, done.id, 'structured')).text, json);
  });

  it('goes with a big text within one limit: two notices, two links', async () => {
    const { store, runtime } = setup(catalog, { maxResultChars: 1000 });
    const done = await settled(runtime, await run(runtime, 'rows_and_text'));
    const content = done.result?.content as Block[];
    assert.deepEqual(
      content.filter((b) => b.type === 'resource_link').map((b) => b.uri?.split('/').at(-1)),
      ['result', 'structured'],
    );
    assert.ok(handedOutChars(content) <= 1000, `${handedOutChars(content)} within the limit`);
    assert.match(
      content[0]?.text ?? '',
      /structuredContent was moved out[^]*\n\[This result was shortened/,
    );
    assert.equal((await readAll(store, done.id, 'result')).text, big);
    assert.equal((await readAll(store, done.id, 'structured')).text, json);
  });

  it('stays whole in the result of a tool that declares an outputSchema', async () => {
    const { store, runtime } = setup(catalog, { maxResultChars: 1000 });
    const done = await settled(runtime, await run(runtime, 'checked'));
    assert.deepEqual(done.result?.['structuredContent'], rows);
    assert.equal((await readAll(store, done.id, 'structured')).end, 0);
    assert.equal((await readAll(store, done.id, 'result')).text, `${note}\n${json}`);
  });
});
