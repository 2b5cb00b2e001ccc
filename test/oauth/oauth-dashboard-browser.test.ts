import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { chromiumSkip, launchChromium } from '../helpers/chromium.js';
import { makeKey, TestAuthServer, type TestKey } from './auth-server.js';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

function tools(app: TaskServer): void {
  app.tool('hold', { description: 'Runs until cancelled', task: true }, async (_args, ctx) => {
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
    return { content: [{ type: 'text', text: 'stopped' }] };
  });
  app.tool('ask', { description: 'Asks first', task: true }, async (_args, ctx) => {
    const answer = await ctx.elicit('go', {
      message: 'Go?',
      requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
    });
    return { content: [{ type: 'text', text: answer.action }] };
  });
}

describe(
  'dashboard for OAuth operators: controls follow the write scope',
  { skip: chromiumSkip() },
  () => {
    const as = new TestAuthServer();
    let key: TestKey;
    let app: TaskServer;
    let browser: Browser;
    let page: Page;
    let url = '';
    let base = '';

    before(async () => {
      key = await makeKey('rsa-1', 'RS256');
      await as.start(key);
      app = createTaskServer({
        store: new MemoryTaskStore(),
        logger: silent,
        auth: { oauth: { issuer: as.issuer } },
        admin: { oauth: { issuer: as.issuer } },
      });
      tools(app);
      url = (await app.listen(0, '127.0.0.1')).url;
      base = new URL(url).origin;
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await app?.close(1000);
      await as.close();
    });

    const row = (id: string) => page.locator(`#tasks tbody tr[data-id="${id}"]`);

    async function openAs(scope: string): Promise<void> {
      page = await browser.newPage({ viewport: { width: 1200, height: 700 } });
      await page.goto(`${base}/dashboard`);
      await page.fill('#token', await as.token(key, { sub: 'ops', scope }, url));
      await page.click('#login-form button');
      await page.locator('#live.on').waitFor();
    }

    it('shows a read-only operator neither cancel buttons nor answer forms', async () => {
      const held = await app.runtime.createTask({
        tool: 'hold',
        arguments: {},
        principal: 'alice',
      });
      const parked = await app.runtime.createTask({ tool: 'ask', arguments: {}, principal: 'bob' });
      await openAs('taskrail:admin');
      assert.match((await page.locator('#who').textContent()) ?? '', /read only/);
      await row(held.id).locator('.status.working').waitFor();
      await row(parked.id).locator('.status.input_required').click();
      await page.locator('#detail .note', { hasText: 'may not answer input' }).waitFor();
      assert.equal(await page.locator('button.cancel').count(), 0);
      assert.equal(
        await page.locator('#detail form, #detail textarea, #detail button.answer').count(),
        0,
      );
      await page.close();
    });

    it('shows the write-scope operator both', async () => {
      const parked = await app.runtime.createTask({
        tool: 'ask',
        arguments: {},
        principal: 'carol',
      });
      await openAs('taskrail:admin:write');
      await row(parked.id).locator('.status.input_required').click();
      await page.locator('#detail form.answer-form[data-key="go"]').waitFor();
      assert.ok((await page.locator('button.cancel').count()) >= 2);
      await page.close();
    });
  },
);
