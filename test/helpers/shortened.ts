/**
 * Checks of a shortened result and of reading its whole parts back through `resources/read`
 * pages, shared by the task-resource tests of every store, the proxy and the process tests.
 */
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/client';

export interface Block {
  type: string;
  text?: string;
  uri?: string;
  mimeType?: string;
  size?: number;
}

export interface Page {
  text: string;
  meta: Record<string, unknown>;
}

export async function readPage(client: Client, uri: string): Promise<Page> {
  const read = await client.readResource({ uri });
  const first = read.contents[0] as { text?: string; _meta?: Record<string, unknown> };
  return { text: first.text ?? '', meta: first._meta ?? {} };
}

/** The whole text behind `uri`, read page after page; no page is longer than `maxChars`. */
export async function readWhole(client: Client, uri: string, maxChars: number): Promise<string> {
  let whole = '';
  for (let offset = 0, total = Infinity; offset < total;) {
    const page = await readPage(client, `${uri}?offset=${offset}`);
    assert.ok(page.text.length <= maxChars, `a read returns at most ${maxChars} characters`);
    assert.ok(page.text.length > 0 || offset >= total, 'a page before the end is not empty');
    whole += page.text;
    total = page.meta['taskrail/total'] as number;
    offset = page.meta['taskrail/nextOffset'] as number;
  }
  return whole;
}

/** The `resource_link` of a shortened result to its `kind` part. */
export function linkTo(content: unknown, kind: 'result' | 'structured'): Block {
  const link = (content as Block[]).find(
    (block) => block.type === 'resource_link' && block.uri?.endsWith(`/${kind}`) === true,
  );
  assert.ok(link?.uri, `a resource_link to the whole ${kind}`);
  assert.match(link.uri, new RegExp(`^taskrail://tasks/[^/]+/${kind}$`));
  return link;
}

/**
 * A result shortened as the interface says: it begins by telling how to read `whole` behind the
 * link of `kind` (sized in bytes), and its text blocks and links stay within `maxChars`.
 */
export function assertShortened(
  result: { content?: unknown },
  whole: string,
  maxChars: number,
  kind: 'result' | 'structured' = 'result',
): Block {
  const content = (result.content ?? []) as Block[];
  const link = linkTo(content, kind);
  assert.equal(link.size, Buffer.byteLength(whole));
  assert.equal(link.mimeType, kind === 'result' ? 'text/plain' : 'application/json');
  const first = content[0]?.text ?? '';
  assert.ok(first.startsWith('['), 'the first words say it was shortened');
  assert.ok(first.includes(`${link.uri}?offset=`), 'says how to read the rest');
  assert.ok(first.includes(`${whole.length} characters`), 'says from how many characters');
  const links = content.filter((block) => block.type === 'resource_link');
  const chars =
    content.reduce((sum, block) => sum + (block.text?.length ?? 0), 0) +
    links.reduce((sum, block) => sum + JSON.stringify(block).length, 0);
  assert.ok(chars <= maxChars, `${chars} characters handed out, within ${maxChars}`);
  return link;
}

/** Pages are exact slices of `whole`, never half a surrogate pair; past the end reads empty. */
export async function assertExactSlices(client: Client, uri: string, whole: string): Promise<void> {
  const slice = await readPage(client, `${uri}?offset=1000&length=500`);
  assert.equal(slice.meta['taskrail/offset'], 1000);
  assert.ok(slice.text.length >= 499 && slice.text.length <= 501, 'never half a pair');
  assert.equal(slice.text, whole.slice(1000, 1000 + slice.text.length));
  assert.equal(slice.meta['taskrail/total'], whole.length);
  const past = await readPage(client, `${uri}?offset=${whole.length + 10}&length=5`);
  assert.equal(past.text, '');
}

/** The error `client` gets reading `uri`; fails when the read succeeds. */
export async function refusalOf(
  client: Client,
  uri: string,
): Promise<{ code: unknown; data: unknown }> {
  try {
    await client.readResource({ uri });
  } catch (error) {
    const { code, data } = error as { code?: unknown; data?: unknown };
    return { code, data };
  }
  assert.fail(`${uri} should be refused`);
}

/** `other` gets for `uri` exactly what anyone gets for a task that never was. */
export async function assertUnknownTo(other: Client, uri: string): Promise<void> {
  const kind = /\/(result|output|structured)$/.exec(uri)?.[1] ?? 'result';
  const unknown = await refusalOf(other, `taskrail://tasks/never-was/${kind}`);
  assert.deepEqual(await refusalOf(other, uri), { ...unknown, data: { uri } });
}
