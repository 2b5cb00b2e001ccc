import assert from 'node:assert/strict';
import { rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { chromiumSkip, launchChromium } from '../helpers/chromium.js';
import { waitFor } from '../helpers/wait.js';
import { ADMIN, CALLER, startHarness, type Harness } from './harness.js';

/** docs/dashboard*.png are rewritten only on request, so test runs leave the tree clean. */
const screenshotPath = (name: string) =>
  process.env['TASKRAIL_UPDATE_SCREENSHOT'] === '1'
    ? fileURLToPath(new URL(`../../../docs/${name}.png`, import.meta.url))
    : join(tmpdir(), `taskrail-${name}-${process.pid}.png`);
const SCREENSHOT = screenshotPath('dashboard');
const FORM_SCREENSHOT = screenshotPath('dashboard-answer');
/** Kept after the run (not under docs/) so a person can look at the 800 px layout. */
const NARROW_SCREENSHOT = join(tmpdir(), 'taskrail-dashboard-800px.png');

/** Runs in the page before its own script: keeps every CSP violation it reports. */
const RECORD_CSP_VIOLATIONS = `window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__csp.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sourceFile + ':' + e.lineNumber);
});`;
const skip = chromiumSkip();

describe('dashboard in headless Chromium', { skip }, () => {
  let h: Harness;
  let browser: Browser;
  let page: Page;
  const cspConsole: string[] = [];

  before(async () => {
    h = await startHarness();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1360, height: 760 } });
    await page.addInitScript({ content: RECORD_CSP_VIOLATIONS });
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspConsole.push(message.text());
    });
  });
  after(async () => {
    await browser?.close();
    await h?.close();
    for (const path of [SCREENSHOT, FORM_SCREENSHOT]) {
      if (!path.includes('docs')) rmSync(path, { force: true });
    }
  });

  const row = (id: string) => page.locator(`#tasks tbody tr[data-id="${id}"]`);
  const statusOf = async (id: string) => (await h.store.get(id))?.status;

  it('refuses a caller token: the API answers 401 and the page asks again', async () => {
    await page.goto(`${h.base}/dashboard`);
    await page.fill('#token', CALLER);
    await page.click('#login-form button');
    await page.locator('#login-error').filter({ hasText: '401' }).waitFor();
    assert.equal(await page.locator('#app').isHidden(), true);
    const api = await page.request.get(`${h.base}/dashboard/api/tasks`, {
      headers: { authorization: `Bearer ${CALLER}` },
    });
    assert.equal(api.status(), 401);
  });

  it('logs in once with the admin token and keeps it for the session', async () => {
    await page.fill('#token', ADMIN);
    await page.click('#login-form button');
    await page.locator('#live.on').waitFor();
    assert.equal(await page.locator('#who').textContent(), 'ops · may answer input');
    await page.reload();
    await page.locator('#live.on').waitFor();
  });

  it('updates the table live while a task runs', async () => {
    const task = await h.create('gate', { key: 'browser' }, 'alice');
    await row(task.id).locator('.status.working').waitFor();
    await row(task.id).locator('td.msg', { hasText: 'waiting at gate browser' }).waitFor();
    h.open('browser');
    await row(task.id).locator('.status.completed').waitFor();
  });

  it('shows a tool that returned isError with the tool-error badge, list and detail', async () => {
    const task = await h.create('oops', {}, 'alice');
    await waitFor('the tool error', async () => (await statusOf(task.id)) === 'completed');
    const badge = row(task.id).locator('.status.tool_error');
    await badge.waitFor();
    assert.equal(await badge.textContent(), 'tool error');
    assert.equal(await row(task.id).locator('.status.completed').count(), 0);
    await row(task.id).click();
    await page.locator('#detail h2', { hasText: task.id }).waitFor();
    assert.equal(await page.locator('#detail .status.tool_error').textContent(), 'tool error');
    const facts = page.locator('#detail p.note', { hasText: 'principal alice' });
    assert.match((await facts.textContent()) ?? '', / · wire 2026-07-28 · /);
  });

  it('filters by status, tool and principal', async () => {
    const bob = await h.create('quick', {}, 'bob');
    const parked = await h.create('ask', {}, 'carol');
    await waitFor('bob done', async () => (await statusOf(bob.id)) === 'completed');
    await row(parked.id).locator('.status.input_required').waitFor();
    await page.selectOption('#f-status', 'input_required');
    await row(bob.id).waitFor({ state: 'detached' });
    assert.equal(await row(parked.id).count(), 1);
    await page.selectOption('#f-status', '');
    await page.fill('#f-principal', 'bob');
    await page.dispatchEvent('#f-principal', 'change');
    await row(parked.id).waitFor({ state: 'detached' });
    assert.equal(await row(bob.id).count(), 1);
    await page.fill('#f-principal', '');
    await page.fill('#f-tool', 'ask');
    await page.dispatchEvent('#f-tool', 'change');
    await row(bob.id).waitFor({ state: 'detached' });
    assert.equal(await row(parked.id).count(), 1);
    await page.fill('#f-tool', '');
    await page.dispatchEvent('#f-tool', 'change');
    await row(bob.id).waitFor();
    const broken = await h.create('oops', {}, 'bob');
    await row(broken.id).locator('.status.tool_error').waitFor();
    await page.selectOption('#f-status', 'tool_error');
    await row(bob.id).waitFor({ state: 'detached' });
    assert.equal(await row(broken.id).count(), 1);
    await page.selectOption('#f-status', 'completed');
    await row(broken.id).waitFor({ state: 'detached' });
    assert.equal(await row(bob.id).count(), 1);
    await page.selectOption('#f-status', '');
  });

  it("keeps the newest filter's list when an older list answers last", async () => {
    // Under load a filter's list can answer after the next filter's (CI saw the older one wipe
    // a row that had arrived live in between): held here until the newer list and a live row
    // are on the page.
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const stale = /\/dashboard\/api\/tasks\?.*status=completed/;
    await page.route(stale, async (route) => {
      const response = await route.fetch();
      await held;
      await route.fulfill({ response });
    });
    try {
      const staleAnswered = page.waitForResponse((response) => stale.test(response.url()));
      await page.selectOption('#f-status', 'completed');
      await page.selectOption('#f-status', '');
      const live = await h.create('gate', { key: 'overtaken' }, 'grace');
      await row(live.id).locator('td.msg', { hasText: 'waiting' }).waitFor();
      release();
      await (await staleAnswered).finished();
      await page.evaluate('new Promise((resolve) => setTimeout(resolve, 0))');
      assert.equal(await row(live.id).count(), 1, 'the row that arrived live is still listed');
      h.open('overtaken');
      await row(live.id).locator('.status.completed').waitFor();
    } finally {
      release();
      await page.unroute(stale);
    }
  });

  it('shows attempts of the limit and durable waits, and filters by the kind of wait', async () => {
    const retrying = await h.create('backing_off', {}, 'alice');
    const sleeping = await h.create('napping', {}, 'bob');
    const wait = (id: string) => row(id).locator('td.st .wait');
    await wait(retrying.id)
      .filter({ hasText: /^retry until (\d\d-\d\d )?\d\d:\d\d:\d\dZ$/ })
      .waitFor();
    assert.equal(await row(retrying.id).locator('td.attempt').textContent(), '2 of 3');
    assert.match((await wait(retrying.id).getAttribute('title')) ?? '', /next attempt at 20\d\d-/);
    await wait(sleeping.id)
      .filter({ hasText: /^sleeping until / })
      .waitFor();
    assert.equal(await row(sleeping.id).locator('td.attempt').textContent(), '1 of 3');
    await page.selectOption('#f-waiting', 'sleep');
    await row(retrying.id).waitFor({ state: 'detached' });
    assert.equal(await row(sleeping.id).count(), 1);
    await row(sleeping.id).click();
    const facts = page.locator('#detail p.note', { hasText: 'principal bob' });
    await facts.filter({ hasText: / · attempt 1 of 3 · sleeping until / }).waitFor();
    await page.selectOption('#f-waiting', '');
    await row(retrying.id).waitFor();
  });

  it('answers a question through the form built from its requestedSchema', async () => {
    const parked = await h.create('deploy', {}, 'dave');
    await row(parked.id).locator('.status.input_required').click();
    const form = page.locator('#detail form.answer-form[data-key="plan"]');
    await form.waitFor();
    assert.equal(await form.locator('select[name="env"]').count(), 1);
    assert.equal(await form.locator('input[name="notify"][type="checkbox"]').count(), 1);
    assert.equal(await form.locator('input[name="replicas"][type="number"]').count(), 1);
    assert.equal(await form.locator('input[name="reason"][type="text"]').count(), 1);
    assert.deepEqual(await form.locator('.field.required span').allTextContents(), [
      'Environment *',
      'reason *',
    ]);
    await form.locator('input[name="replicas"]').fill('12');
    await form.locator('button.answer').click();
    const problem = form.locator('.form-error');
    await problem.filter({ hasText: 'reason is required' }).waitFor();
    assert.match((await problem.textContent()) ?? '', /Environment is required/);
    assert.match((await problem.textContent()) ?? '', /replicas must be at most 10/);
    assert.equal(await statusOf(parked.id), 'input_required');
    await form.locator('select[name="env"]').selectOption('production');
    await page.locator('#detail').screenshot({ path: FORM_SCREENSHOT });
    assert.ok(statSync(FORM_SCREENSHOT).size > 5_000);
    await form.locator('input[name="replicas"]').fill('3');
    await form.locator('input[name="notify"]').check();
    await form.locator('input[name="reason"]').fill('hotfix 42');
    await form.locator('button.answer').click();
    await waitFor('completion', async () => (await statusOf(parked.id)) === 'completed');
    const done = await h.store.get(parked.id);
    const content = done?.result?.['content'] as { text: string }[];
    assert.deepEqual(JSON.parse(content[0]!.text), {
      action: 'accept',
      content: { env: 'production', replicas: 3, notify: true, reason: 'hotfix 42' },
    });
    assert.equal(h.runs.get('deploy'), 2, 'one run that parked, one resumed run');
    await row(parked.id).locator('.status.completed').waitFor();
    const answered = page.locator('#detail ol.timeline li.kind-answer');
    await answered.filter({ hasText: 'answer plan by operator ops' }).waitFor();
    assert.match((await answered.textContent()) ?? '', /"reason":"hotfix 42"/);
  });

  it('falls back to raw JSON for a schema the form cannot render', async () => {
    const parked = await h.create('ask_list', {}, 'dave');
    await row(parked.id).locator('.status.input_required').click();
    const area = page.locator('#detail textarea[data-key="tags"]');
    await area.fill('{"action":"accept","content":{"tags":[{"name":"x"}]}}');
    await page.click('#detail button.answer');
    await waitFor('completion', async () => (await statusOf(parked.id)) === 'completed');
    const content = (await h.store.get(parked.id))?.result?.['content'] as { text: string }[];
    assert.deepEqual(JSON.parse(content[0]!.text).content, { tags: [{ name: 'x' }] });
  });

  it('cancels a task from the page', async () => {
    const task = await h.create('gate', { key: 'stays-shut' }, 'erin');
    await h.create('gate', { key: 'screenshot' }, 'alice');
    await row(task.id).locator('td.msg', { hasText: 'waiting' }).waitFor();
    await row(task.id).click();
    await page.locator('#detail h2', { hasText: task.id }).waitFor();
    await page.screenshot({ path: SCREENSHOT });
    assert.ok(statSync(SCREENSHOT).size > 10_000);
    page.once('dialog', (dialog) => void dialog.accept());
    await row(task.id).locator('button.cancel').click();
    await waitFor('cancellation', async () => (await statusOf(task.id)) === 'cancelled');
    await row(task.id).locator('.status.cancelled').waitFor();
    await waitFor('the handler to stop', () => h.aborted.has('stays-shut'));
    h.open('screenshot');
  });

  it('keeps the detail pane inside an 800 px wide window', async () => {
    await page.setViewportSize({ width: 800, height: 700 });
    const task = await h.create('gate', { key: `narrow-${'x'.repeat(300)}` }, 'frank');
    await row(task.id).locator('td.msg', { hasText: 'waiting' }).click();
    await page.locator('#detail h2', { hasText: task.id }).waitFor();
    await page.locator('#detail pre', { hasText: 'narrow-xxx' }).waitFor();
    const box = (await page.evaluate(`(() => {
      const pane = document.getElementById('detail');
      return { scroll: pane.scrollWidth, client: pane.clientWidth,
        right: pane.getBoundingClientRect().right, page: document.documentElement.scrollWidth };
    })()`)) as { scroll: number; client: number; right: number; page: number };
    assert.ok(box.scroll <= box.client, `the pane scrolls sideways: ${JSON.stringify(box)}`);
    assert.ok(box.right <= 800, `the pane ends past the window: ${JSON.stringify(box)}`);
    assert.ok(box.page <= 800, `the page scrolls sideways: ${JSON.stringify(box)}`);
    h.open(`narrow-${'x'.repeat(300)}`);
    await row(task.id).locator('.status.completed').waitFor();
  });

  it('fits the task table in its box at 800 px: every Cancel button shows, no word is split', async () => {
    await page.setViewportSize({ width: 800, height: 700 });
    const parked = await h.create('ask', {}, 'a-principal-with-a-long-name');
    await h.create('gate', { key: 'narrow table with a longer progress message to wrap' }, 'gina');
    const msg = row(parked.id).locator('td.msg');
    await msg.filter({ hasText: 'question' }).waitFor();
    assert.equal(await msg.textContent(), '1 question pending · Go ahead?');
    if (await page.locator('#detail').isVisible())
      await page.locator('#detail button.close').click();
    const table = (await page.evaluate(`(() => {
      const wrap = document.getElementById('tasks-wrap');
      const edge = wrap.getBoundingClientRect().right;
      const buttons = [...document.querySelectorAll('#tasks button.cancel')];
      const cut = buttons.filter((b) => b.getBoundingClientRect().right > edge + 0.5).length;
      const split = [];
      const walker = document.createTreeWalker(document.querySelector('#tasks'), NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        // A break after a hyphen (2026-12-04) is a line break the browser may take, not a split.
        for (const word of node.data.matchAll(/[^\\s-]+/g)) {
          if (word[0].length > 24) continue;
          const range = document.createRange();
          range.setStart(node, word.index);
          range.setEnd(node, word.index + word[0].length);
          const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
          if (lines.size > 1) split.push(word[0]);
        }
      }
      return { scroll: wrap.scrollWidth, client: wrap.clientWidth, buttons: buttons.length, cut, split,
        page: document.documentElement.scrollWidth };
    })()`)) as {
      scroll: number;
      client: number;
      buttons: number;
      cut: number;
      split: string[];
      page: number;
    };
    await page.screenshot({ path: NARROW_SCREENSHOT });
    assert.ok(table.buttons >= 2, JSON.stringify(table));
    assert.ok(
      table.scroll <= table.client,
      `the table is wider than its box: ${JSON.stringify(table)}`,
    );
    assert.equal(table.cut, 0, `Cancel buttons cut off: ${JSON.stringify(table)}`);
    assert.deepEqual(table.split, [], 'words broken mid-word');
    assert.ok(table.page <= 800, `the page scrolls sideways: ${JSON.stringify(table)}`);
    await page.setViewportSize({ width: 1360, height: 760 });
  });

  it('served a favicon, and the page broke no rule of its Content-Security-Policy', async () => {
    const icon = await page.request.get(`${h.base}/dashboard/favicon.svg`);
    assert.equal(icon.status(), 200);
    assert.match(icon.headers()['content-type'] ?? '', /^image\/svg\+xml/);
    assert.equal(
      await page.locator('link[rel="icon"]').getAttribute('href'),
      '/dashboard/favicon.svg',
    );
    const policy = (await page.request.get(`${h.base}/dashboard`)).headers()[
      'content-security-policy'
    ];
    assert.match(policy ?? '', /style-src 'self'/);
    assert.doesNotMatch(policy ?? '', /unsafe-inline/);
    assert.deepEqual(await page.evaluate('window.__csp'), []);
    assert.deepEqual(cspConsole, []);
  });
});
