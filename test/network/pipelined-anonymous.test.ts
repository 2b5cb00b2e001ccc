/**
 * An anonymous caller's one request at a time takes no connections ticket (its key is its own
 * connection), but requests pipelined behind it on the same connection do: one raw socket
 * cannot hold more than its share of waiting requests (real HTTP/1.1 pipelining on 127.0.0.1).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { envelope } from '../listen/support.js';
import { waitFor } from '../helpers/wait.js';

const MAX_CONNECTIONS = 12;
/** A caller's share of the connections bound: half of `--max-connections`. */
const SHARE = MAX_CONNECTIONS / 2;
const silent = { info() {}, warn() {}, error() {} };

function syncCall(id: number, port: number): string {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'held', arguments: {}, _meta: envelope(false) },
  });
  const head = [
    'POST /mcp HTTP/1.1',
    `Host: 127.0.0.1:${port}`,
    'Content-Type: application/json',
    'Accept: application/json, text/event-stream',
    'Mcp-Protocol-Version: 2026-07-28',
    'Mcp-Method: tools/call',
    'Mcp-Name: held',
    `Content-Length: ${Buffer.byteLength(body)}`,
  ];
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

/** Writes `requests` in one write on one socket; resolves with the status of each answer. */
function pipeline(port: number, requests: string[]): { statuses: Promise<number[]> } {
  const socket = connect({ port, host: '127.0.0.1' });
  socket.on('connect', () => socket.write(requests.join('')));
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  const statuses = new Promise<number[]>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('close', () => {
      const lines = text.match(/^HTTP\/1\.1 (\d{3})/gm) ?? [];
      resolve(lines.map((line) => Number(line.slice(9))));
    });
  });
  return { statuses };
}

describe('requests pipelined by an anonymous caller, counted against its connection', () => {
  let app: TaskServer;
  let port: number;
  let ran = 0;
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));

  before(async () => {
    app = createTaskServer({
      logger: silent,
      store: new MemoryTaskStore(),
      http: { maxConnections: MAX_CONNECTIONS, maxConnectionsPerAddress: MAX_CONNECTIONS },
    });
    app.tool('held', { description: 'waits for the test' }, async () => {
      ran += 1;
      await released;
      return { content: [{ type: 'text', text: 'done' }] };
    });
    app.runtime.start();
    port = Number(new URL((await app.listen(0)).url).port);
  });
  after(() => app.close(500));

  it('runs the request in front and its share behind it, and refuses the rest with 429', async () => {
    const count = SHARE + 2;
    const requests = Array.from({ length: count }, (_, i) => syncCall(i + 1, port));
    // One write on loopback is one read on the server: Node parses every request in it, and
    // each takes or is refused its ticket, before any handler runs.
    const { statuses } = pipeline(port, requests);
    await waitFor(`${SHARE + 1} handlers running`, () => ran === SHARE + 1);
    release();
    const answers = await statuses;
    assert.deepEqual(answers, [...Array<number>(SHARE + 1).fill(200), 429]);
    assert.equal(ran, SHARE + 1, 'the refused request never ran its tool');
    console.log(`# pipelined ${count} on one anonymous connection: ${ran} ran, 1 refused (429)`);
  });
});
