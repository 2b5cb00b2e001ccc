import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { tempDir, type Serve } from '../../client/support.js';
import { waitFor } from '../../helpers/wait.js';
import {
  HOST_DEADLINE_MS,
  logLines,
  pressUntil,
  select,
  serveForHost,
  session,
  skip,
} from './tui.js';

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

  it('shows the question as a form and answers it with tasks/update', async (t) => {
    const started = Date.now();
    const run = await session(serve, 'form', [
      select('confirm_step'),
      { tool: 'mcp__taskrail__confirm_step', input: {} },
      { text: 'Waiting for your answer.' },
      { text: 'Done.' },
    ]);
    const screen = () => run.tmux.screen();
    try {
      await waitFor('the form', async () => /Proceed: ☐/.test(screen()) || undefined, {
        timeoutMs: HOST_DEADLINE_MS,
      });
      assert.match(screen(), /Proceed with the migration\?/);
      await pressUntil(run.tmux, ['Space'], 'the box ticked', () => /Proceed: ☒/.test(screen()));
      await pressUntil(run.tmux, ['Down'], 'Accept selected', () => /❯ Accept/.test(screen()));
      await pressUntil(run.tmux, ['Enter'], 'the answer sent', () =>
        logLines(serve).some((line) => line['method'] === 'tasks/update'),
      );
      await waitFor(
        'the answer to reach the tool and the result the model',
        async () =>
          run.model.userTexts.some((t) => /answer accept proceed=true/.test(t)) ? true : undefined,
        { timeoutMs: HOST_DEADLINE_MS },
      );
      const updates = logLines(serve).filter((line) => line['method'] === 'tasks/update');
      assert.equal(updates.length, 1, 'one tasks/update carries the answer');
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const how = 'answered in the host: accept (form, tasks/update)';
      t.diagnostic(`host claude-code 2.1.328 | question | ${how} | ${seconds} s`);
    } catch (error) {
      const log = logLines(serve)
        .slice(-30)
        .map((line) => JSON.stringify(line));
      throw new Error(`${String(error)}\n${run.diagnose()}\nserver:\n${log.join('\n')}`);
    } finally {
      await run.close();
    }
  });
});
