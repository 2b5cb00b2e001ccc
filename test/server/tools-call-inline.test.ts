import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as z from 'zod/v4';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import type { ToolHandler } from '../../src/runtime/tool.js';
import { waitFor } from '../helpers/wait.js';
import { wire2026Post } from './support.js';

/**
 * Synchronous tools/call from hosts without tasks are answered in front of the SDK; these pin
 * that each outcome leaves with the bytes the SDK path gives. Every tool has a twin named
 * `NAME_sdk` whose no-op `beforeTask` hook sends it through the SDK path.
 */
const ELICIT = { confirm: { type: 'boolean' } };

/** A store whose `create` fails while `failing` is set (store trouble under a call). */
function troubledStore(inner: MemoryTaskStore): { store: TaskStore; fail: (on: boolean) => void } {
  let failing = false;
  const store = new Proxy(inner, {
    get(target, key, receiver) {
      if (key === 'create' && failing) return () => Promise.reject(new Error('disk on fire'));
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store, fail: (on) => (failing = on) };
}

let release: () => void = () => undefined;
let gate = new Promise<void>((resolve) => (release = resolve));
const reopenGate = () => (gate = new Promise<void>((resolve) => (release = resolve)));

const TOOLS: Record<string, { handler: ToolHandler; schema?: z.ZodObject; required?: boolean }> = {
  plain: { handler: () => ({ content: [{ text: 'hi', type: 'text' }] }) },
  empty: { handler: () => ({ content: [] }) },
  contentless: { handler: () => ({}) as never },
  structured: {
    handler: () => ({ content: [], structuredContent: { a: 1, b: [true, null] } }),
  },
  is_error: { handler: () => ({ content: [{ type: 'text', text: 'no' }], isError: true }) },
  error_first: { handler: () => ({ isError: false, content: [{ type: 'text', text: 'x' }] }) },
  throws: {
    handler: () => {
      throw new Error('boom');
    },
  },
  image: {
    handler: () => ({
      content: [{ type: 'image', data: 'aGk=', mimeType: 'image/png' }],
      structuredContent: { n: 1 },
    }),
  },
  with_meta: { handler: () => ({ content: [], _meta: { 'x.dev/k': 1 } }) },
  bad_result: { handler: () => ({ content: [{ type: 'nonsense' }] }) as never },
  asks: {
    handler: async (_args, ctx) => {
      const answer = await ctx.elicit('confirm', {
        message: 'Sure?',
        requestedSchema: { type: 'object', properties: ELICIT },
      });
      return { content: [{ type: 'text', text: answer.action }] };
    },
  },
  gated: {
    handler: async () => {
      await gate;
      return { content: [{ type: 'text', text: 'late' }] };
    },
  },
  typed: {
    schema: z.object({ n: z.number(), label: z.string().default('none') }),
    handler: (args) => ({ content: [{ type: 'text', text: JSON.stringify(args) }] }),
  },
  required_tool: { handler: () => ({ content: [] }), required: true },
};

function serverWith(store: TaskStore, options: { fallbackTools?: boolean } = {}): TaskServer {
  const app = createTaskServer({
    store,
    name: 'sync',
    version: '1.0.0',
    inlineWaitMs: 300,
    runtime: { maxArgumentsBytes: 200 },
    ...options,
  });
  for (const [name, spec] of Object.entries(TOOLS)) {
    const task = spec.required === true ? { mode: 'required' as const } : true;
    const config = {
      description: name,
      task,
      ...(spec.schema === undefined ? {} : { inputSchema: spec.schema }),
    };
    app.tool(name, config, spec.handler);
    app.tool(`${name}_sdk`, { ...config, beforeTask: () => undefined }, spec.handler);
  }
  return app;
}

interface Raw {
  status: number;
  type: string | null;
  text: string;
}

async function call(
  url: string,
  name: string,
  args: unknown,
  caps: Record<string, unknown> = {},
  signal?: AbortSignal,
): Promise<Raw> {
  const params = { name, ...(args === undefined ? {} : { arguments: args }) };
  const { body, headers } = wire2026Post('tools/call', params, { caps, id: 7 });
  const res = await fetch(url, {
    method: 'POST',
    headers,
    body,
    ...(signal === undefined ? {} : { signal }),
  });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

/** Task ids differ from call to call, and the twin's name from the tool's. */
const TASK_ID = /(?<=["( ])[0-9A-Za-z_-]{32}(?=["\\ )/])/g;
function same(fast: Raw, sdk: Raw, name: string): void {
  const normal = (raw: Raw) => ({
    ...raw,
    text: raw.text.replaceAll(`${name}_sdk`, name).replaceAll(TASK_ID, 'TASK'),
  });
  assert.deepEqual(normal(fast), normal(sdk), name);
}

describe('tools/call waited for inline, answered before the SDK', () => {
  const inner = new MemoryTaskStore();
  const trouble = troubledStore(inner);
  let app: TaskServer;
  let url: string;
  let withFallback: TaskServer;
  let fallbackUrl: string;
  /** SDK server instances built (the front builds none). */
  let instances = 0;
  before(async () => {
    app = serverWith(trouble.store).configure(() => void (instances += 1));
    ({ url } = await app.listen(0));
    withFallback = serverWith(inner, { fallbackTools: true });
    ({ url: fallbackUrl } = await withFallback.listen(0));
  });
  after(async () => {
    release();
    await app.close(1000);
    await withFallback.close(1000);
    await inner.close();
  });

  const both = async (name: string, args: unknown, caps?: Record<string, unknown>) => {
    const before = instances;
    const fast = await call(url, name, args, caps);
    assert.equal(instances, before, `${name} went through the SDK`);
    const sdk = await call(url, `${name}_sdk`, args, caps);
    assert.equal(instances, before + 1);
    same(fast, sdk, name);
    return fast;
  };

  it('gives the SDK bytes for results within the wait', async () => {
    for (const name of [
      'plain',
      'empty',
      'contentless',
      'structured',
      'is_error',
      'error_first',
      'throws',
    ]) {
      const fast = await both(name, {});
      assert.equal(fast.status, 200);
    }
    const structured = await both('structured', undefined);
    assert.match(structured.text, /"text":"\{\\"a\\":1,\\"b\\":\[true,null\]\}"/);
    assert.match((await both('throws', {})).text, /"isError":true/);
  });

  it('leaves results it does not encode itself to the SDK encoder, with the same bytes', async () => {
    for (const name of ['image', 'with_meta', 'bad_result']) await both(name, {});
    assert.match((await both('bad_result', {})).text, /"error"/);
  });

  it('applies schema defaults and leaves refused arguments to the SDK', async () => {
    assert.match((await both('typed', { n: 1 })).text, /\\"label\\":\\"none\\"/);
    const before = instances;
    const fast = await call(url, 'typed', { n: 'one' });
    assert.equal(instances, before + 1, 'refused arguments go to the SDK');
    same(fast, await call(url, 'typed_sdk', { n: 'one' }), 'typed');
  });

  it('answers a runtime refusal (arguments over the size limit) as the SDK does', async () => {
    const fast = await both('typed', { n: 1, label: 'x'.repeat(300) });
    assert.match(fast.text, /"isError":true/);
  });

  it('asks over the request when the host can answer, and hands over when it cannot', async () => {
    const asked = await both('asks', {}, { elicitation: {} });
    assert.match(asked.text, /"resultType":"input_required"/);
    const cannot = await both('asks', {});
    assert.match(cannot.text, /needs input this host cannot give/);
  });

  it('keeps waiting past the inline wait without fallback tools', async () => {
    reopenGate();
    const settled: string[] = [];
    const fast = call(url, 'gated', {}).finally(() => settled.push('fast'));
    const sdk = call(url, 'gated_sdk', {}).finally(() => settled.push('sdk'));
    // Both tasks working for more than two inline waits (300 ms), both calls still open.
    await waitFor('both tasks past two inline waits', async () => {
      const tasks = (await inner.list({ limit: 1000 })).tasks.filter(
        (task) => task.tool.startsWith('gated') && task.status === 'working',
      );
      return tasks.length === 2 && tasks.every((task) => Date.now() - task.createdAt > 700);
    });
    assert.deepEqual(settled, []);
    release();
    same(await fast, await sdk, 'gated');
    assert.match((await fast).text, /late/);
  });

  it('answers with a handle past the wait with fallback tools', async () => {
    reopenGate();
    const fast = await call(fallbackUrl, 'gated', {});
    const sdk = await call(fallbackUrl, 'gated_sdk', {});
    release();
    same(fast, sdk, 'gated');
    assert.match(fast.text, /task_result/);
    same(
      await call(fallbackUrl, 'required_tool', {}),
      await call(fallbackUrl, 'required_tool_sdk', {}),
      'required_tool',
    );
  });

  it('answers store trouble with the SDK path error', async () => {
    trouble.fail(true);
    try {
      const fast = await both('plain', {});
      assert.equal(fast.status, 503);
    } finally {
      trouble.fail(false);
    }
  });

  it('leaves calls with a progressToken or MRTR fields to the SDK', async () => {
    const before = instances;
    await call(url, 'required_tool', {});
    assert.equal(instances, before, 'the -32021 gate answers in front');
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'plain',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'plain',
          _meta: {
            progressToken: 'p',
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1.0.0' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    await res.text();
    assert.equal(instances, before + 1);
  });

  it('stops waiting when the caller goes away; the task runs on', async () => {
    reopenGate();
    for (const name of ['gated', 'gated_sdk']) {
      const count = (await inner.list({ limit: 1000 })).tasks.length;
      const abort = new AbortController();
      const pending = call(url, name, {}, {}, abort.signal).catch((error: unknown) => error);
      await waitFor('the task exists', async () => {
        return (await inner.list({ limit: 1000 })).tasks.length > count;
      });
      abort.abort();
      assert.ok((await pending) instanceof Error);
    }
    release();
    await waitFor('the abandoned tasks complete', async () => {
      const tasks = (await inner.list({ limit: 1000 })).tasks;
      const gated = tasks.filter((task) => task.tool.startsWith('gated'));
      return gated.every((task) => task.status === 'completed');
    });
  });
});
