import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { tempDir, type Serve } from '../../client/support.js';
import { waitFor } from '../../helpers/wait.js';
import { logLines, select, serveForHost, session, skip } from './tui.js';

describe('Claude Code 2.1.328 interactive (tmux): form', { skip }, () => {
  const dir = tempDir('cc-form');
  let serve: Serve;
  before(async () => {
    serve = await serveForHost(dir.path);
  });
  after(async () => {
    await serve.stop();
    dir.remove();
  });

  it('shows the question as a form and answers it with tasks/update', async () => {
    const run = await session(serve, 'form', [
      select('confirm_step'),
      { tool: 'mcp__taskrail__confirm_step', input: {} },
      { text: 'Waiting for your answer.' },
      { text: 'Done.' },
    ]);
    const onScreen = (pattern: RegExp, what: string) =>
      waitFor(what, async () => (pattern.test(run.tmux.screen()) ? true : undefined), {
        timeoutMs: 30_000,
      });
    try {
      await onScreen(/Proceed with the migration\?[\s\S]*Proceed: ☐/, 'the form');
      run.tmux.keys('Space');
      await onScreen(/Proceed: (?!☐)/, 'the box ticked');
      run.tmux.keys('Down');
      await onScreen(/❯ Accept/, 'Accept selected');
      run.tmux.keys('Enter');
      await waitFor(
        'the answer to reach the tool and the result the model',
        async () =>
          run.model.userTexts.some((t) => /answer accept proceed=true/.test(t)) ? true : undefined,
        { timeoutMs: 30_000 },
      );
      assert.ok(logLines(serve).some((line) => line['method'] === 'tasks/update'));
    } finally {
      await run.close();
    }
  });
});
