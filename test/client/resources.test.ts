import assert from 'node:assert/strict';
import { STRUCTURED_NOTICE_START } from '../../src/task/kept-apart.js';
import { describe, it } from 'node:test';
import {
  isShortened,
  parseTaskResourceUri,
  taskResourceUri,
  withRange,
  type CallToolResult,
} from '../../src/client/index.js';
import { followOutputOf, type OutputSource } from '../../src/client/output-follow.js';
import type { OutputPush, PushNote } from '../../src/client/push-notes.js';
import {
  pageText,
  parsePage,
  readToEnd,
  wholeResult,
  type ReadPage,
} from '../../src/client/resources.js';

/** Slices `text` as the contract says a server does: capped, never splitting a surrogate pair. */
function pagedServer(
  texts: Record<string, string>,
  cap: number,
): { read: ReadPage; urls: string[] } {
  const urls: string[] = [];
  const read: ReadPage = (uri) => {
    urls.push(uri);
    const url = new URL(uri);
    const base = `${url.protocol}//${url.host}${url.pathname}`;
    const text = texts[base];
    if (text === undefined) return Promise.reject(new Error(`unknown ${base}`));
    const offset = Number(url.searchParams.get('offset') ?? 0);
    const length = Math.min(Number(url.searchParams.get('length') ?? cap), cap);
    let end = Math.min(offset + length, text.length);
    if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1] ?? '')) end -= 1;
    return Promise.resolve({ text: offset >= text.length ? '' : text.slice(offset, end) });
  };
  return { read, urls };
}

const RESULT = taskResourceUri('t1', 'result');

describe('task resource URIs', () => {
  it('names a task resource, reads the task id back, and sets or replaces the range', () => {
    assert.equal(RESULT, 'taskrail://tasks/t1/result');
    assert.deepEqual(parseTaskResourceUri('taskrail://tasks/a%2Fb/output?offset=3'), {
      taskId: 'a/b',
      kind: 'output',
    });
    assert.equal(parseTaskResourceUri('taskrail://tasks/t1/other'), undefined);
    assert.equal(parseTaskResourceUri('https://example.com/x'), undefined);
    assert.equal(
      withRange(`${RESULT}?offset=9`, { offset: 0, length: 5 }),
      `${RESULT}?offset=0&length=5`,
    );
    assert.equal(withRange(RESULT, {}), RESULT);
    assert.throws(() => withRange(RESULT, { offset: -1 }), /offset must be a whole number/);
    assert.throws(() => withRange(RESULT, { length: 1.5 }), /length must be a whole number/);
  });

  it('reads the text of a resources/read reply and names the URI in an error', () => {
    const ok = { kind: 'result', result: { contents: [{ uri: RESULT, text: 'abc' }] } } as const;
    assert.equal(pageText(RESULT, ok), 'abc');
    const meta = { 'taskrail/nextOffset': 7, 'taskrail/total': 9 };
    const withMeta = {
      kind: 'result',
      result: { contents: [{ uri: RESULT, text: 'x', _meta: meta }] },
    } as const;
    assert.deepEqual(parsePage(RESULT, withMeta), { text: 'x', nextOffset: 7, total: 9 });
    assert.equal(pageText(RESULT, { kind: 'result', result: { contents: [] } }), '');
    assert.throws(
      () =>
        pageText(RESULT, { kind: 'error', error: { code: -32602, message: 'Unknown resource' } }),
      (error: Error & { code?: string }) =>
        error.code === 'NOT_FOUND' && error.message.includes(RESULT),
    );
    assert.throws(() => pageText(RESULT, { kind: 'result', result: {} }), /no contents/);
  });
});

describe('reading a shortened result whole', () => {
  it('pages to the end with each page starting where the text so far ends, across surrogate pairs', async () => {
    const text = '😀'.repeat(5000) + 'x'.repeat(2501);
    const server = pagedServer({ [RESULT]: text }, 1001);
    const whole = await readToEnd(server.read, RESULT);
    assert.equal(whole, text);
    // 1001-unit pages shortened to 1000 inside the emoji, then full pages: offsets follow the text.
    assert.match(server.urls[1] ?? '', /offset=1000&/);
    assert.equal(server.urls.at(-1), `${RESULT}?offset=${text.length}&length=1000000`);
  });

  it('stops at the size the link gave without an extra empty read, and reads from an offset', async () => {
    const text = 'é'.repeat(3000);
    const server = pagedServer({ [RESULT]: text }, 1000);
    assert.equal(
      await readToEnd(server.read, RESULT, { sizeBytes: Buffer.byteLength(text) }),
      text,
    );
    assert.equal(server.urls.length, 3);
    assert.equal(await readToEnd(server.read, RESULT, { offset: 2990 }), 'é'.repeat(10));
  });

  it("advances by the server's nextOffset past a dropped-output marker and stops at its total", async () => {
    const urls: string[] = [];
    const pages: Record<string, { text: string; nextOffset: number; total: number }> = {
      '0': { text: '[… 100 earlier characters were dropped …]\nabc', nextOffset: 103, total: 106 },
      '103': { text: 'def', nextOffset: 106, total: 106 },
    };
    const read: ReadPage = (uri) => {
      urls.push(uri);
      const page = pages[new URL(uri).searchParams.get('offset') ?? ''];
      return page === undefined
        ? Promise.reject(new Error(`no page at ${uri}`))
        : Promise.resolve(page);
    };
    const output = taskResourceUri('t1', 'output');
    assert.equal(
      await readToEnd(read, output),
      '[… 100 earlier characters were dropped …]\nabcdef',
    );
    assert.equal(urls.length, 2, 'no read past the total');
  });

  it('replaces the shortened text and link by the whole text and parses structuredContent back', async () => {
    const text = 'line\n'.repeat(20_000);
    const structured = { rows: Array.from({ length: 500 }, (_, i) => ({ i })) };
    const structuredUri = taskResourceUri('t1', 'structured');
    const server = pagedServer(
      { [RESULT]: text, [structuredUri]: JSON.stringify(structured) },
      4000,
    );
    const shortened: CallToolResult = {
      content: [
        { type: 'text', text: `Shortened … read ${RESULT}?offset=…` },
        { type: 'resource_link', uri: RESULT, name: 'result', size: text.length },
        { type: 'resource_link', uri: structuredUri, name: 'structured' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      ],
    };
    assert.equal(isShortened(shortened), true);
    const whole = await wholeResult(server.read, shortened);
    assert.deepEqual(whole.content, [
      { type: 'text', text },
      { type: 'image', data: 'AAAA', mimeType: 'image/png' },
    ]);
    assert.deepEqual(whole.structuredContent, structured);
    const onlyStructured: CallToolResult = {
      content: [
        { type: 'text', text: `${STRUCTURED_NOTICE_START} … ${structuredUri}?offset=0 …]\n` },
        { type: 'text', text: 'a short note' },
        { type: 'resource_link', uri: structuredUri, name: 'structured' },
      ],
    };
    const read = await wholeResult(server.read, onlyStructured);
    assert.deepEqual(
      read.content,
      [{ type: 'text', text: 'a short note' }],
      'notice and link gone',
    );
    assert.deepEqual(read.structuredContent, structured);
    const plain: CallToolResult = { content: [{ type: 'resource_link', uri: 'https://x/y' }] };
    assert.equal(isShortened(plain), false);
    assert.equal(await wholeResult(server.read, plain), plain);
  });
});

describe('following output', () => {
  const quiet: PushNote = { unsure: false, ended: false, lost: false };

  /** A stream that grows by one chunk per push, each push saying the length; the last ends it. */
  function pushed(chunks: string[]): { source: OutputSource; reads: () => number } {
    let written = '';
    let next = 0;
    let reads = 0;
    const push: OutputPush = {
      ready: () => Promise.resolve(true),
      next: () => {
        written += chunks[next++] ?? '';
        const ended = next >= chunks.length;
        return Promise.resolve({ ...quiet, total: written.length, ended });
      },
      close: () => undefined,
    };
    const source: OutputSource = {
      read: (uri) => {
        reads += 1;
        const offset = Number(new URL(uri).searchParams.get('offset'));
        return Promise.resolve({
          text: written.slice(offset),
          total: written.length,
          status: 'working',
        });
      },
      ended: () => Promise.resolve(false),
      push,
    };
    return { source, reads: () => reads };
  }

  it('with a push: reads first, then only when an update says the text grew; ends with the last update', async () => {
    const { source, reads } = pushed(['a\n', 'b\n', '', 'c\n']);
    const seen: string[] = [];
    for await (const chunk of followOutputOf(source, taskResourceUri('t', 'output')))
      seen.push(chunk);
    assert.deepEqual(seen, ['a\n', 'b\n', 'c\n']);
    // The first read, then one per update that grew the text: none for the empty one.
    assert.equal(reads(), 4);
  });

  it('without a push: polls from the offset read so far until a page says the task ended', async () => {
    const text = '0123456789';
    let reads = 0;
    const source: OutputSource = {
      read: (uri) => {
        reads += 1;
        const offset = Number(new URL(uri).searchParams.get('offset'));
        const shown = text.slice(offset, 6 + reads * 2);
        return Promise.resolve({ text: shown, status: reads >= 3 ? 'completed' : 'working' });
      },
      ended: () => Promise.reject(new Error('the page said the status')),
    };
    const seen: string[] = [];
    for await (const chunk of followOutputOf(source, taskResourceUri('t', 'output'), {
      offset: 6,
      pollIntervalMs: 1,
    }))
      seen.push(chunk);
    assert.equal(seen.join(''), '6789');
  });

  it('stops without error when its signal is aborted', async () => {
    const stop = new AbortController();
    const source: OutputSource = {
      read: (uri) =>
        Promise.resolve({
          text: '0123456789'.slice(Number(new URL(uri).searchParams.get('offset'))),
          status: 'working',
        }),
      ended: () => Promise.resolve(false),
    };
    const seen: string[] = [];
    for await (const chunk of followOutputOf(source, taskResourceUri('t', 'output'), {
      offset: 6,
      signal: stop.signal,
    })) {
      seen.push(chunk);
      stop.abort();
    }
    assert.deepEqual(seen, ['6789']);
  });
});
