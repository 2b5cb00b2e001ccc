import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import {
  Ledger,
  TaskrailClient,
  clientOptionsFromEnv,
  type InputHandlers,
} from '../../src/client/index.js';
import { startProxy, startServe, tempDir, type Proxy, type Serve } from './support.js';

describe('taskrail/client against taskrail serve', () => {
  const dir = tempDir('lib');
  let serve: Serve;
  let proxy: Proxy;
  let ledger: Ledger;
  const clients: TaskrailClient[] = [];
  const client = (
    input: InputHandlers = {},
    extra: Partial<ConstructorParameters<typeof TaskrailClient>[0]> = {},
  ) => {
    const c = new TaskrailClient({ url: proxy.url, ledger, input, ...extra });
    clients.push(c);
    return c;
  };

  before(async () => {
    serve = await startServe(dir.path);
    proxy = await startProxy(serve.url);
    ledger = Ledger.open(`${dir.path}/home`);
  });
  after(async () => {
    for (const c of clients) c.close();
    ledger.close();
    await proxy.close();
    await serve.stop();
    dir.remove();
  });

  it('background by default: a handle at once, the result later; the ledger entry precedes the first poll', async () => {
    const seenAtFirstGet: unknown[] = [];
    const c = client();
    const call = await c.callTool('slow_compute', { seconds: 0.5 });
    assert.ok(call.taskId !== undefined);
    assert.equal(call.outcome, undefined, 'still running when the handle comes back');
    const firstGet = proxy.seen.find(
      (s) => s.method === 'tasks/get' && s.params.taskId === call.taskId,
    );
    seenAtFirstGet.push(firstGet);
    assert.equal(firstGet, undefined, 'no tasks/get before callTool returned');
    assert.ok(ledger.get(call.taskId) !== undefined, 'recorded before polling');
    const outcome = await call.result();
    assert.equal(outcome.kind, 'completed');
  });

  it('polls no faster than pollIntervalMs (tasks/get arrival gaps at the proxy)', async () => {
    // Poll only: pushed states (subscriptions/listen), where the server offers them, replace polls.
    const pollOnly = { push: false } as object;
    const c = client({}, pollOnly);
    const call = await c.callTool('slow_compute', { seconds: 1.5 });
    await call.result();
    const created = proxy.seen.filter((s) => s.method === 'tools/call').at(-1)!;
    const gets = proxy.seen.filter(
      (s) => s.method === 'tasks/get' && s.params.taskId === call.taskId,
    );
    assert.ok(gets.length >= 3, `polled ${gets.length} times`);
    const interval = ledger.require(call.taskId!).pollIntervalMs;
    const times = [created.at, ...gets.map((g) => g.at)];
    for (let i = 1; i < times.length; i++) {
      assert.ok(
        times[i]! - times[i - 1]! >= interval - 1,
        `gap ${times[i]! - times[i - 1]!} ms < ${interval} ms`,
      );
    }
    for (const g of gets) assert.equal(g.headers['mcp-name'], call.taskId, 'Mcp-Name = taskId');
  });

  it('re-reads after broken push streams without polling faster than pollIntervalMs', async () => {
    const cutting = await startProxy(serve.url, { cutListenAfterMs: 120 });
    try {
      const c = client({}, { url: cutting.url });
      const call = await c.callTool('slow_compute', { seconds: 1.5 });
      assert.equal((await call.result()).kind, 'completed');
      assert.ok(cutting.count('subscriptions/listen') >= 1, 'the client subscribed');
      const interval = ledger.require(call.taskId!).pollIntervalMs;
      const created = cutting.seen.find((s) => s.method === 'tools/call')!;
      const gets = cutting.seen.filter((s) => s.method === 'tasks/get');
      const times = [created.at, ...gets.map((g) => g.at)];
      for (let i = 1; i < times.length; i++) {
        const gap = times[i]! - times[i - 1]!;
        assert.ok(gap >= interval - 1, `gap ${gap} ms < ${interval} ms`);
      }
    } finally {
      await cutting.close();
    }
  });

  it('synchronous when TASKRAIL_DISABLE_TASK_BACKGROUND=1 is passed through clientOptionsFromEnv', async () => {
    const env = clientOptionsFromEnv({ TASKRAIL_DISABLE_TASK_BACKGROUND: '1' });
    assert.deepEqual(env, { background: false });
    const call = await client({}, env).callTool('slow_compute', { seconds: 0.2 });
    assert.equal(call.outcome?.kind, 'completed');
  });

  it('reads no environment variable itself', async () => {
    process.env.TASKRAIL_DISABLE_TASKS = '1';
    process.env.TASKRAIL_DISABLE_TASK_BACKGROUND = '1';
    try {
      const call = await client().callTool('slow_compute', { seconds: 0.2 });
      assert.ok(call.taskId !== undefined, 'the library obeyed TASKRAIL_DISABLE_TASKS');
      assert.equal(call.outcome, undefined, 'the library obeyed TASKRAIL_DISABLE_TASK_BACKGROUND');
      await call.result();
    } finally {
      delete process.env.TASKRAIL_DISABLE_TASKS;
      delete process.env.TASKRAIL_DISABLE_TASK_BACKGROUND;
    }
  });

  it('declares the extension unless TASKRAIL_DISABLE_TASKS=1 is passed through clientOptionsFromEnv', async () => {
    const declared = (s: (typeof proxy.seen)[number]) =>
      JSON.stringify(s.params._meta).includes('"io.modelcontextprotocol/tasks"');
    await (await client().callTool('greet', { name: 'a' })).result();
    assert.ok(declared(proxy.seen.filter((s) => s.method === 'tools/call').at(-1)!));
    const env = clientOptionsFromEnv({ TASKRAIL_DISABLE_TASKS: '1', TASKRAIL_HOME: '' });
    assert.deepEqual(env, { tasks: false });
    const call = await client({}, env).callTool('slow_compute', { seconds: 0 });
    assert.equal(call.taskId, undefined);
    assert.ok(!declared(proxy.seen.filter((s) => s.method === 'tools/call').at(-1)!));
  });

  it('reports its own package version as clientInfo', async () => {
    const { version } = JSON.parse(
      readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    await (await client().callTool('greet', { name: 'v' })).result();
    const sent = proxy.seen.filter((s) => s.method === 'tools/call').at(-1)!;
    const info = (sent.params._meta as Record<string, unknown>)[
      'io.modelcontextprotocol/clientInfo'
    ];
    assert.deepEqual(info, { name: 'taskrail', version });
  });

  it('answers inputRequests through the host handler, each key once', async () => {
    const asked: string[] = [];
    const c = client({
      elicitation: async (params, ctx) => {
        asked.push(ctx.key);
        const props = Object.keys((params.requestedSchema as { properties: object }).properties);
        return {
          action: 'accept',
          content: Object.fromEntries(props.map((p) => [p, p === 'confirm' ? true : 'Ada'])),
        };
      },
    });
    const one = await (await c.callTool('confirm_delete', { filename: 'x.txt' })).result();
    assert.equal(one.kind, 'completed');
    assert.match(JSON.stringify(one), /Deleted x.txt/);
    const two = await c.callTool('multi_input', {});
    assert.equal((await two.result()).kind, 'completed');
    assert.deepEqual([...asked].sort(), ['confirm', 'confirm', 'name'].sort());
    assert.deepEqual(new Set(asked.slice(1)).size, 2, 'multi_input keys each asked once');
    assert.deepEqual(ledger.require(two.taskId!).answeredKeys.sort(), ['confirm', 'name']);
  });

  it('cancel sends tasks/cancel and waits for the terminal status', async () => {
    const call = await client({}, { push: false } as object).callTool('slow_compute', {
      seconds: 60,
    });
    const outcome = await call.cancel();
    assert.equal(outcome.kind, 'cancelled');
    const mine = proxy.seen.filter((s) => s.params.taskId === call.taskId);
    const cancelAt = mine.findIndex((s) => s.method === 'tasks/cancel');
    assert.ok(cancelAt >= 0 && mine.slice(cancelAt + 1).some((s) => s.method === 'tasks/get'));
  });

  it('resume() reattaches to unfinished ledger tasks', async () => {
    const first = client();
    const call = await first.callTool('slow_compute', { seconds: 0.6 });
    call.detach();
    const resumed = await client().resume();
    const mine = resumed.find((r) => r.taskId === call.taskId);
    assert.ok(mine !== undefined);
    assert.equal((await mine.result()).kind, 'completed');
  });

  it('keeps outcomes apart: tool error, failed, rejected', async () => {
    const c = client();
    assert.equal((await (await c.callTool('failing_job')).result()).kind, 'tool_error');
    const failed = await (await c.callTool('protocol_error_job')).result();
    assert.equal(failed.kind, 'failed');
    const rejected = await c.callTool('greet', { name: 42 });
    assert.equal(rejected.outcome?.kind, 'rejected');
  });
});

describe('taskrail/client retrying a create whose reply was lost', () => {
  const dir = tempDir('idem');
  let serve: Serve;
  let proxy: Proxy;
  let ledger: Ledger;
  let dropped = 0;

  before(async () => {
    serve = await startServe(dir.path);
    // The first tools/call of every key reaches the server; its reply never comes back.
    const keys = new Set<string>();
    proxy = await startProxy(serve.url, {
      dropReply: (seen) => {
        const meta = seen.params['_meta'] as Record<string, unknown> | undefined;
        const key = String(
          meta?.['dev.taskrail/idempotency-key'] ?? JSON.stringify(seen.params['arguments']),
        );
        if (seen.method !== 'tools/call' || keys.has(key)) return false;
        keys.add(key);
        dropped += 1;
        return true;
      },
    });
    ledger = Ledger.open(`${dir.path}/home`);
  });
  after(async () => {
    ledger.close();
    await proxy.close();
    await serve.stop();
    dir.remove();
  });

  it('sends the call again with its key and gets the one task the first attempt made', async () => {
    const c = new TaskrailClient({ url: proxy.url, ledger, push: false });
    try {
      const call = await c.callTool(
        'slow_compute',
        { seconds: 0.2, label: 'once' },
        {
          idempotencyKey: 'library-test-once',
        },
      );
      assert.equal((await call.result()).kind, 'completed');
      const creates = proxy.seen.filter((s) => s.method === 'tools/call');
      assert.equal(creates.length, 2, 'the lost attempt and its retry');
      assert.equal(dropped, 1);
      const server = new TaskrailClient({ url: serve.url, ledger, push: false });
      const direct = await server.callTool(
        'slow_compute',
        { seconds: 0.2, label: 'once' },
        {
          idempotencyKey: 'library-test-once',
        },
      );
      assert.equal(direct.taskId, call.taskId, 'the server holds one task for the key');
      server.close();
    } finally {
      c.close();
    }
  });

  it('a call whose reply never came is sent again by resume() after a restart', async () => {
    const crashed = new TaskrailClient({
      url: proxy.url,
      ledger,
      push: false,
      connectionGraceMs: 0,
    });
    await assert.rejects(
      crashed.callTool(
        'slow_compute',
        { seconds: 0.2, label: 'pending' },
        {
          idempotencyKey: 'library-test-pending',
        },
      ),
      (error: unknown) => (error as { code?: string }).code === 'CONNECTION',
    );
    crashed.close();
    assert.deepEqual(
      ledger.pending(proxy.url).map((call) => call.key),
      ['library-test-pending'],
      'written before sending, kept when the reply was lost',
    );
    const restarted = new TaskrailClient({ url: proxy.url, ledger, push: false });
    try {
      const calls = await restarted.resume();
      const resent = calls.find(
        (call) =>
          call.taskId !== undefined && ledger.get(call.taskId)?.arguments['label'] === 'pending',
      );
      assert.ok(resent, 'resume() sent it again and follows its task');
      assert.equal((await resent.result()).kind, 'completed');
      assert.deepEqual(ledger.pending(proxy.url), []);
      const direct = new TaskrailClient({ url: serve.url, ledger, push: false });
      const again = await direct.callTool(
        'slow_compute',
        { seconds: 0.2, label: 'pending' },
        {
          idempotencyKey: 'library-test-pending',
        },
      );
      direct.close();
      assert.equal(again.taskId, resent.taskId, 'one task for the key');
    } finally {
      restarted.close();
    }
  });

  it('without a key a lost reply is an error, not a silent second call', async () => {
    const c = new TaskrailClient({ url: proxy.url, ledger, push: false });
    try {
      const before = proxy.count('tools/call');
      await assert.rejects(
        c.callTool('slow_compute', { seconds: 0.2, label: 'keyless' }),
        (error: unknown) => (error as { code?: string }).code === 'CONNECTION',
      );
      assert.equal(proxy.count('tools/call'), before + 1);
      await assert.rejects(
        c.callTool('slow_compute', { seconds: 0.2 }, { idempotencyKey: 'not a key' }),
        (error: unknown) => (error as { code?: string }).code === 'USAGE',
      );
      assert.equal(proxy.count('tools/call'), before + 1, 'a malformed key sends nothing');
    } finally {
      c.close();
    }
  });
});
