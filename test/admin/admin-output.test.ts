import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { splitText } from '../../src/store/text.js';
import { chromiumSkip, launchChromium } from '../helpers/chromium.js';
import { waitFor } from '../helpers/wait.js';
import { ADMIN, call, rowsText, startHarness, type Harness } from './harness.js';

/** Appends as the runtime does, chunk by chunk (the store takes at most 64 Ki per append). */
async function append(h: Harness, id: string, kind: 'output' | 'result', text: string) {
  for (const chunk of splitText(text)) {
    const done = await h.store.appendText(id, kind, chunk);
    assert.equal(done.ok, true);
  }
}

const LONG = rowsText(6000);

describe('dashboard: task output and the whole result, over HTTP', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  it('serves the output from an offset in pages that join back to the whole', async () => {
    const task = await h.create('gate', { key: 'http-pages' }, 'alice');
    await append(h, task.id, 'output', LONG);
    let offset = 0;
    const parts: string[] = [];
    for (let page = 0; page < 100; page++) {
      const { status, body } = await call(
        h.base,
        `/dashboard/api/tasks/${task.id}/output?offset=${offset}`,
        ADMIN,
      );
      assert.equal(status, 200);
      assert.equal(body.start, offset);
      assert.equal(body.end, LONG.length);
      if (body.text === '') break;
      parts.push(body.text);
      offset += body.text.length;
    }
    assert.ok(parts.length > 1, 'more than one page');
    assert.equal(parts.join(''), LONG);
    h.open('http-pages');
  });

  it('refuses a bad offset, an unknown task and a caller token', async () => {
    const task = await h.create('quick', {}, 'alice');
    const bad = await call(h.base, `/dashboard/api/tasks/${task.id}/output?offset=-3`, ADMIN);
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /offset must be an integer/);
    const unknown = await call(h.base, '/dashboard/api/tasks/task-unknown-0000/output', ADMIN);
    assert.equal(unknown.status, 404);
    const caller = await call(
      h.base,
      `/dashboard/api/tasks/${task.id}/output`,
      'caller-token-alice',
    );
    assert.equal(caller.status, 401);
  });

  it("downloads the stored whole text of a shortened result, else the record's text", async () => {
    const quick = await h.create('quick', {}, 'alice');
    await waitFor('quick to complete', async () =>
      (await h.store.get(quick.id))?.status === 'completed' ? true : undefined,
    );
    const plain = await fetch(`${h.base}/dashboard/api/tasks/${quick.id}/result`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    assert.equal(plain.status, 200);
    assert.match(
      plain.headers.get('content-disposition') ?? '',
      /attachment; filename="task-.*-result\.txt"/,
    );
    assert.equal(await plain.text(), 'quick done');
    await append(h, quick.id, 'result', LONG);
    const whole = await fetch(`${h.base}/dashboard/api/tasks/${quick.id}/result`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    assert.equal(await whole.text(), LONG);
    const none = await call(h.base, `/dashboard/api/tasks/${quick.id}/structured`, ADMIN);
    assert.equal(none.status, 404);
    assert.equal(none.body.error, 'no_result');
  });

  it('downloads a structuredContent moved out of the result for its size', async () => {
    const big = await h.create('big', { rows: 6000, structured: true }, 'alice');
    const done = await waitFor('big to complete', async () => {
      const task = await h.store.get(big.id);
      return task?.status === 'completed' ? task : undefined;
    });
    assert.equal(done.result?.['structuredContent'], undefined, 'moved out of the record');
    const res = await fetch(`${h.base}/dashboard/api/tasks/${big.id}/structured`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(JSON.parse(await res.text()), { report: LONG });
  });
});

const skip = chromiumSkip();

describe('dashboard in headless Chromium: output and download', { skip }, () => {
  let h: Harness;
  let browser: Browser;
  let page: Page;

  before(async () => {
    h = await startHarness();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1360, height: 760 }, acceptDownloads: true });
    await page.goto(`${h.base}/dashboard`);
    await page.fill('#token', ADMIN);
    await page.click('#login-form button');
    await page.locator('#live.on').waitFor();
  });
  after(async () => {
    await browser?.close();
    await h?.close();
  });

  const row = (id: string) => page.locator(`#tasks tbody tr[data-id="${id}"]`);
  /** Opens a task's detail and waits until the pane shows it (it replaced the last one's). */
  const openDetail = async (id: string) => {
    await row(id).click();
    await page.locator('#detail h2', { hasText: id }).waitFor();
  };

  it("shows a running task's output as it grows, and keeps it after the task ended", async () => {
    const lines = ['first line\n', 'second line\n'];
    const task = await h.create('emit', { key: 'live-output', lines }, 'alice');
    h.open('live-output-0');
    await row(task.id).click();
    const output = page.locator('#task-output');
    await output.filter({ hasText: 'first line' }).waitFor();
    h.open('live-output-1');
    await waitFor('the second line', async () =>
      (await output.textContent()) === 'first line\nsecond line\n' ? true : undefined,
    );
    await row(task.id).locator('.status.completed').waitFor();
    assert.equal(await output.textContent(), 'first line\nsecond line\n');
  });

  it('offers the whole result of a task as a download', async () => {
    const task = await h.create('big', { rows: 6000 }, 'alice');
    await row(task.id).locator('.status.completed').waitFor();
    // The record keeps the first part; the whole text is in the store beside it.
    const kept = (await h.store.get(task.id))?.result?.['content'] as { text: string }[];
    assert.ok(kept[0]!.text.length < LONG.length);
    await openDetail(task.id);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('#download-result'),
    ]);
    assert.equal(download.suggestedFilename(), `task-${task.id}-result.txt`);
    const path = await download.path();
    assert.equal(readFileSync(path, 'utf8'), LONG);
  });

  it('offers a structuredContent moved out for its size as a JSON download', async () => {
    const task = await h.create('big', { rows: 6000, structured: true }, 'alice');
    await row(task.id).locator('.status.completed').waitFor();
    await openDetail(task.id);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('#download-structured'),
    ]);
    assert.equal(download.suggestedFilename(), `task-${task.id}-structured.json`);
    const saved = readFileSync(await download.path(), 'utf8');
    assert.deepEqual(JSON.parse(saved), { report: LONG });
  });
});
