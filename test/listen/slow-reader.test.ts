/**
 * A listen stream whose reader stops reading does not pile up the server's memory (issue 36):
 * past a high-water mark of unsent bytes its task notifications are coalesced, and once the
 * reader reads again it gets each task's latest state, not every change it missed (nor is it
 * cut off). Real HTTP on 127.0.0.1, a reader that pauses its socket, 30 MB of changes.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { report } from '../../src/task/transitions.js';
import { waitFor } from '../helpers/wait.js';
import { envelope, startHold, startApp, type TestApp } from './support.js';

const CHANGES = 3000;
const PADDING = 'x'.repeat(10_000);

/** A listen stream on a raw socket, read into `text` until paused. */
function openRawListen(url: string, taskId: string): { socket: Socket; text: () => string } {
  const { port, pathname } = new URL(url);
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 'slow',
    method: 'subscriptions/listen',
    params: { notifications: { taskIds: [taskId] }, _meta: envelope() },
  });
  const socket = connect(Number(port), '127.0.0.1');
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  socket.on('error', () => undefined);
  socket.write(
    `POST ${pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
      'Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\n' +
      'Mcp-Method: subscriptions/listen\r\nAuthorization: Bearer tok-a\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return { socket, text: () => text };
}

/** `CHANGES` progress reports of one task, each about 10 KB: 30 MB in all. */
async function change(store: MemoryTaskStore, taskId: string): Promise<void> {
  let written = 0;
  while (written < CHANGES) {
    const current = await store.get(taskId);
    assert.ok(current);
    const next = report(current, `change-${written}-${PADDING}`, Date.now());
    if ((await store.compareAndSet(next, current.revision)).ok) written += 1;
  }
}

function listenRequest(url: string, taskId: string): Request {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 'slow-web',
    method: 'subscriptions/listen',
    params: { notifications: { taskIds: [taskId] }, _meta: envelope() },
  });
  return new Request(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'subscriptions/listen',
      authorization: 'Bearer tok-a',
    },
    body,
  });
}

describe('a listen stream whose reader falls behind', () => {
  const store = new MemoryTaskStore();
  let t: TestApp;
  before(async () => {
    t = await startApp({ store, tokens: { 'tok-a': 'alice' } });
  });
  after(async () => {
    t.gates.release('slow');
    await t.close();
  });

  it('gets each task’s latest state once it reads again, not every change nor a cut', async () => {
    const taskId = await startHold(t.url, 'slow', 'tok-a');
    const listen = openRawListen(t.url, taskId);
    await waitFor('the initial state', () =>
      listen.text().includes('notifications/tasks') ? true : undefined,
    );
    listen.socket.pause();
    await change(store, taskId);
    listen.socket.resume();
    await waitFor(
      'the latest state, once the reader reads again',
      () => (listen.text().includes(`change-${CHANGES - 1}-`) ? true : undefined),
      { timeoutMs: 30_000 },
    );
    const sent = listen.text().split('notifications/tasks').length - 1;
    assert.ok(sent < CHANGES / 2, `${sent} notifications for ${CHANGES} changes: coalesced`);
    listen.socket.destroy();
  });

  it('the same on the web-standard face (a ReadableStream body read late)', async () => {
    const taskId = await startHold(t.url, 'slow-web', 'tok-a');
    const res = await t.app.fetch(listenRequest(t.url, taskId));
    assert.equal(res.status, 200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    const readUntil = async (marker: string): Promise<void> => {
      while (!text.includes(marker)) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`the stream ended before ${marker}`);
        text += decoder.decode(value, { stream: true });
      }
    };
    await readUntil('notifications/tasks');
    await change(store, taskId);
    await readUntil(`change-${CHANGES - 1}-`);
    const sent = text.split('notifications/tasks').length - 1;
    assert.ok(sent < CHANGES / 2, `${sent} notifications for ${CHANGES} changes: coalesced`);
    await reader.cancel();
    t.gates.release('slow-web');
  });
});
