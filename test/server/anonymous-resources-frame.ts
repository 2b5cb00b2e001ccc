/**
 * The anonymous cases of the task-resource frame (task-resources-frame.ts), for every store:
 * without `--auth` every caller is `anonymous`, so a task's resources are kept apart by the
 * session that made it (a task made statelessly is its id's holder's and nobody lists it).
 * Intruders ask on both wires: another 2025-11-25 session, a stateless 2026-07-28 client, and
 * a 2026-07-28 listen stream.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as HostClient } from '@modelcontextprotocol/sdk/client/index.js';
import { serveTaskServerStdio } from '../../src/server/stdio.js';
import { stdioPair } from './stdio-pair.js';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import { waitFor } from '../helpers/wait.js';
import { readPage } from '../helpers/shortened.js';
import { ended, granted, listenResources } from '../listen/resource-listen.js';
import { ackOf, getTask, rpc } from '../listen/support.js';
import type { TaskStore } from '../../src/store/port.js';

type Wire = '2025-11-25' | '2026-07-28';

/** A store for one describe block, and how to give it back. */
export interface OpenedStore {
  store: TaskStore;
  dispose(): Promise<void>;
}

const LINES = 'one\ntwo\nthree\n';

async function anonymousClient(url: string, wire: Wire): Promise<Client> {
  const client = new Client(
    { name: 'anonymous-resources', version: '1.0.0' },
    wire === '2026-07-28' ? { versionNegotiation: { mode: { pin: wire } } } : {},
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

const listed = async (client: Client, uri: string) =>
  (await client.listResources()).resources.some((resource) => resource.uri === uri);

/** What a stateless anonymous listen stream is granted for `uri` (it ends, granted or not). */
async function listenGrant(url: string, uri: string): Promise<unknown> {
  const listen = await listenResources(url, [uri]);
  await waitFor('the ack', () => ackOf(listen));
  await waitFor('the stream to end (the task is over)', () => ended(listen));
  return granted(listen);
}

export function describeAnonymousResources(storeName: string, open: () => Promise<OpenedStore>) {
  describe(`anonymous task resources on ${storeName}, both wires`, () => {
    let opened: OpenedStore;
    let app: TaskServer;
    let url: string;
    const clients: Client[] = [];
    const client = async (wire: Wire) => {
      const made = await anonymousClient(url, wire);
      clients.push(made);
      return made;
    };

    before(async () => {
      opened = await open();
      app = createTaskServer({ store: opened.store, name: 'anon', version: '1.0.0' });
      app.tool('printer', { description: 'prints lines', task: true }, async (_args, ctx) => {
        for (const line of LINES.split(/(?<=\n)/)) await ctx.output(line);
        return { content: [{ type: 'text', text: 'printed' }] };
      });
      url = (await app.listen(0, '127.0.0.1')).url;
    });

    after(async () => {
      for (const made of clients) await made.close();
      await app.close(1000);
      await opened.dispose();
    });

    it('a 2025-11-25 session’s task: no other anonymous caller, on either wire, lists it; its id reads it', async () => {
      const maker = await client('2025-11-25');
      await maker.callTool({ name: 'printer', arguments: {} });
      const uri = (await maker.listResources()).resources.find((r) =>
        r.uri.endsWith('/output'),
      )?.uri;
      assert.ok(uri !== undefined, 'the session that made it lists it');
      assert.equal((await readPage(maker, uri)).text, LINES);
      for (const wire of ['2025-11-25', '2026-07-28'] as const) {
        const other = await client(wire);
        assert.ok(!(await listed(other, uri)), `not listed for an anonymous ${wire} caller`);
        // The id (told only to its maker) is the capability, as for tasks/get: a client whose
        // session the server forgot (a restart) reads on with a new one.
        assert.equal((await readPage(other, uri)).text, LINES, `its id reads it on ${wire}`);
      }
      assert.deepEqual(await listenGrant(url, uri), [uri], 'and follows it');
      await maker.subscribeResource({ uri });
    });

    it('a stdio host is its one session: it and the HTTP callers never see each other’s', async () => {
      const pair = stdioPair();
      const served = serveTaskServerStdio(app, undefined, pair.server);
      const host = new HostClient({ name: 'stdio-host', version: '1.0.0' });
      await host.connect(pair.host);
      try {
        const session = await client('2025-11-25');
        await session.callTool({ name: 'printer', arguments: {} });
        const theirs = (await session.listResources()).resources.map((r) => r.uri);
        assert.ok(theirs.length > 0, 'the HTTP session lists its own');
        const hostLists = (await host.listResources()).resources.map((r) => r.uri);
        assert.deepEqual(
          hostLists.filter((uri) => theirs.includes(uri)),
          [],
          'the stdio host lists none of an HTTP session’s',
        );
        await host.callTool({ name: 'printer', arguments: {} });
        const own = (await host.listResources()).resources.map((r) => r.uri);
        assert.ok(own.length > 0, 'the stdio host lists its own');
        for (const wire of ['2025-11-25', '2026-07-28'] as const) {
          const other = await client(wire);
          assert.ok(!(await listed(other, own[0] as string)), `not listed on ${wire}`);
        }
      } finally {
        await host.close();
        await served.close();
      }
    });

    it('a stateless 2026-07-28 task: nobody lists it; its id’s holder reads and follows it', async () => {
      const call = { name: 'printer', arguments: {} };
      const { body } = await rpc(url, 'tools/call', call, { name: 'printer' });
      const taskId = String((body['result'] as Record<string, unknown> | undefined)?.['taskId']);
      await waitFor('the task to complete', async () =>
        (await getTask(url, taskId))['status'] === 'completed' ? true : undefined,
      );
      const uri = `taskrail://tasks/${taskId}/output`;
      for (const wire of ['2025-11-25', '2026-07-28'] as const) {
        const other = await client(wire);
        assert.ok(!(await listed(other, uri)), `not listed for an anonymous ${wire} caller`);
        assert.equal((await readPage(other, uri)).text, LINES, `its id reads it on ${wire}`);
      }
      assert.deepEqual(await listenGrant(url, uri), [uri]);
    });
  });
}
