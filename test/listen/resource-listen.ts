/**
 * What the resource-subscription tests share besides the `printer` (test/fixtures/printer.ts): the raw 2026-07-28 stream that follows a task resource, and
 * the cases that follow output across two replicas of one store on both wires (run in-process
 * on Redis, as `serve` processes on PostgreSQL).
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { taskResourceUri } from '../../src/client/index.js';
import { BURST } from '../fixtures/printer.js';
import { waitFor } from '../helpers/wait.js';
import { ackOf, openListen, rpc, type RawListen } from './support.js';

type Json = Record<string, unknown>;

export { addPrinter, BURST, type PrinterGate } from '../fixtures/printer.js';

export const TOKENS = { 'tok-a': 'alice', 'tok-b': 'bob' };
export const UPDATED = 'notifications/resources/updated';

/** Starts a `printer` task on the 2026-07-28 wire and returns its id. */
export async function startPrinter(
  url: string,
  key: string,
  bearer?: string,
  gated = false,
): Promise<string> {
  const { body } = await rpc(
    url,
    'tools/call',
    { name: 'printer', arguments: { key, gated } },
    { bearer, name: 'printer' },
  );
  const result = body['result'] as Json | undefined;
  if (result?.['resultType'] !== 'task') throw new Error(`no task: ${JSON.stringify(body)}`);
  return String(result['taskId']);
}

/** A 2026-07-28 `subscriptions/listen` stream asking for updates of `uris`. */
export function listenResources(url: string, uris: string[], bearer?: string): Promise<RawListen> {
  return openListen(url, undefined, {
    declare: false,
    extra: { resourceSubscriptions: uris },
    ...(bearer === undefined ? {} : { bearer }),
  });
}

/** The resource subscriptions the stream's acknowledgement granted. */
export function granted(listen: RawListen): unknown {
  const params = ackOf(listen)?.['params'] as { notifications?: Json } | undefined;
  return params?.notifications?.['resourceSubscriptions'];
}

export function updatesOf(listen: RawListen, uri: string): number {
  return listen.messages.filter(
    (m) => m['method'] === UPDATED && (m['params'] as Json)['uri'] === uri,
  ).length;
}

export const ended = (listen: RawListen) => (listen.done ? true : undefined);

/** An official SDK client on `url` speaking `version`, with a bearer token. */
export async function sdkClient(
  url: string,
  token: string,
  version: '2025-11-25' | '2026-07-28',
): Promise<Client> {
  const client = new Client(
    { name: 'resources-test', version: '1.0.0' },
    version === '2026-07-28' ? { versionNegotiation: { mode: { pin: version } } } : {},
  );
  const headers = { Authorization: `Bearer ${token}` };
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
  );
  return client;
}

/** The text of one `resources/read`, empty when there is none. */
export async function readResourceText(client: Client, uri: string): Promise<string> {
  const read = await client.readResource({ uri });
  return (read.contents[0] as { text?: string } | undefined)?.text ?? '';
}

/** Two replicas of one store: the task runs on `writer`; `reader` never runs it. */
export interface Replicas {
  writer: string;
  reader: string;
  /** Opens the printer's gate `name`. */
  release(name: string): void | Promise<void>;
  close(): Promise<void>;
}

/** The cross-replica subscription cases, for the enclosing `describe`'s deployment. */
export function crossReplicaSubscriptionCases(start: () => Promise<Replicas>): void {
  let replicas: Replicas;
  before(async () => {
    replicas = await start();
  });
  after(() => replicas.close());

  it('a 2026-07-28 stream on one replica is told of output another replica writes', async () => {
    const taskId = await startPrinter(replicas.writer, 'cross', 'tok-a');
    const uri = taskResourceUri(taskId, 'output');
    const listen = await listenResources(replicas.reader, [uri], 'tok-a');
    await waitFor('the ack', () => ackOf(listen));
    assert.deepEqual(granted(listen), [uri]);
    await waitFor('the burst written', async () => {
      const read = await rpc(
        replicas.reader,
        'resources/read',
        { uri },
        { bearer: 'tok-a', name: uri },
      );
      const contents = (read.body['result'] as { contents?: { text?: string }[] } | undefined)
        ?.contents;
      return contents?.[0]?.text?.includes(`burst ${BURST - 1}\n`) || undefined;
    });
    const before = updatesOf(listen, uri);
    await replicas.release('cross-0');
    await waitFor(
      'an update for a line written on the other replica',
      () => updatesOf(listen, uri) > before || undefined,
    );
    await replicas.release('cross-1');
    await waitFor('the stream to end with the task', () => ended(listen), { timeoutMs: 20_000 });
  });

  it('a 2025-11-25 resources/subscribe on one replica is told of output another writes', async () => {
    const taskId = await startPrinter(replicas.writer, 'cross25', 'tok-a');
    const uri = taskResourceUri(taskId, 'output');
    const alice = await sdkClient(replicas.reader, 'tok-a', '2025-11-25');
    const bob = await sdkClient(replicas.reader, 'tok-b', '2025-11-25');
    try {
      const updates: string[] = [];
      alice.setNotificationHandler(UPDATED, (n) => void updates.push(String(n.params.uri)));
      await alice.subscribeResource({ uri });
      await assert.rejects(bob.subscribeResource({ uri }), 'another principal cannot subscribe');
      await waitFor(
        'the burst written',
        async () =>
          (await readResourceText(alice, uri)).includes(`burst ${BURST - 1}\n`) || undefined,
      );
      const before = updates.length;
      await replicas.release('cross25-0');
      await waitFor('an update for a line written on the other replica', async () =>
        updates.length > before && (await readResourceText(alice, uri)).endsWith('line 0\n')
          ? true
          : undefined,
      );
      await replicas.release('cross25-1');
      await waitFor(
        'the last line',
        async () => (await readResourceText(alice, uri)).endsWith('line 0\nline 1\n') || undefined,
      );
      assert.ok(updates.every((updated) => updated === uri));
    } finally {
      await alice.close();
      await bob.close();
    }
  });
}
