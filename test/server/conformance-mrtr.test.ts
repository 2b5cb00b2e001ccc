import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import registerConformance from '../../conformance/tools.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { rpc } from './support.js';

const CAPS = { elicitation: {}, sampling: {}, roots: {} };
const accept = (content: object) => ({ action: 'accept', content });

describe('conformance MRTR fixtures (SEP-2322)', () => {
  let app: TaskServer;
  let store: MemoryTaskStore;
  let url: string;

  before(async () => {
    store = new MemoryTaskStore();
    app = createTaskServer({ store, name: 'mrtr', version: '1.0.0' });
    registerConformance(app);
    url = (await app.listen(0, '127.0.0.1')).url;
  });

  after(async () => {
    await app.close(500);
    await store.close();
  });

  const call = (
    name: string,
    extra: Record<string, unknown> = {},
    caps: Record<string, unknown> = CAPS,
  ) => rpc(url, 'tools/call', { name, arguments: {}, ...extra }, { caps });

  it('carries signed requestState through three rounds', async () => {
    const tool = 'test_input_required_result_multi_round';
    const r1 = (await call(tool)).body.result ?? {};
    assert.equal(r1['resultType'], 'input_required');
    const r2 = (
      await call(tool, {
        inputResponses: { step1: accept({ name: 'Alice' }) },
        requestState: r1['requestState'],
      })
    ).body.result;
    assert.ok(r2?.['requestState'] !== r1['requestState']);
    const r3 = await call(tool, {
      inputResponses: { step2: accept({ color: 'blue' }) },
      requestState: r2?.['requestState'],
    });
    assert.match(JSON.stringify(r3.body.result), /Alice likes blue/);
  });

  it('answers a tampered requestState with -32602', async () => {
    const tool = 'test_input_required_result_tampered_state';
    const first = (await call(tool)).body.result ?? {};
    const reply = await call(tool, {
      inputResponses: { confirm: accept({ ok: true }) },
      requestState: `${String(first['requestState'])}x`,
    });
    assert.equal(reply.body.error?.code, -32602);
  });

  it('does not accept a state minted for another tool', async () => {
    const first = (await call('test_input_required_result_multi_round')).body.result ?? {};
    const reply = await call('test_input_required_result_request_state', {
      inputResponses: { confirm: accept({ ok: true }) },
      requestState: first['requestState'],
    });
    assert.equal(reply.body.result?.['resultType'], 'input_required');
  });

  it('asks only through the capabilities the request declared', async () => {
    const reply = await call('test_input_required_result_capabilities', {}, { sampling: {} });
    const requests = Object.values(reply.body.result?.['inputRequests'] ?? {}) as {
      method: string;
    }[];
    assert.deepEqual(
      requests.map((r) => r.method),
      ['sampling/createMessage'],
    );
  });
});
