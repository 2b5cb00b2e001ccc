import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { tempDir, type Serve } from '../../client/support.js';
import { waitFor } from '../../helpers/wait.js';
import { HOST_DEADLINE_MS, logLines, select, serveForHost, session, skip } from './tui.js';

describe('Claude Code 2.1.328 interactive (tmux): long', { skip }, () => {
  const dir = tempDir('cc-long');
  let serve: Serve;
  before(async () => {
    serve = await serveForHost(dir.path);
  });
  after(async () => {
    await serve.stop();
    dir.remove();
  });

  it('runs a long tool as a task, polls tasks/get and gets the result to the model', async () => {
    const run = await session(serve, 'long', [
      select('long_job'),
      { tool: 'mcp__taskrail__long_job', input: { seconds: 3 } },
      { text: 'Started in the background.' },
      { text: 'Finished.' },
    ]);
    try {
      const placeholder = await waitFor('the placeholder', async () => run.model.resultOfStep(1), {
        timeoutMs: HOST_DEADLINE_MS,
      });
      assert.match(placeholder.text, /started server-side task (\S+)\./);
      const taskId = /server-side task ([^\s.]+)\./.exec(placeholder.text)?.[1];
      await waitFor(
        'the result in a task notification',
        async () =>
          run.model.userTexts.some((t) => /long job finished after 3s/.test(t)) ? true : undefined,
        { timeoutMs: HOST_DEADLINE_MS },
      );
      const polls = logLines(serve).filter(
        (line) => line['method'] === 'tasks/get' && line['taskId'] === taskId,
      );
      assert.ok(polls.length >= 2, `polled ${polls.length} times`);
      const created = logLines(serve).filter((line) => line['message'] === 'task created');
      assert.equal(created.length, 1, 'one task, however often it was polled');
    } finally {
      await run.close();
    }
  });
});
