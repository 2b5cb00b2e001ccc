import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { tempDir, type Serve } from '../../client/support.js';
import { waitFor } from '../../helpers/wait.js';
import type { Script } from './fake-anthropic.js';
import { HOST_DEADLINE_MS, logLines, select, serveForHost, session, skip } from './tui.js';

describe('Claude Code 2.1.328 interactive (tmux): cancel', { skip }, () => {
  const dir = tempDir('cc-cancel');
  let serve: Serve;
  before(async () => {
    serve = await serveForHost(dir.path);
  });
  after(async () => {
    await serve.stop();
    dir.remove();
  });

  it('cancels the task when the model stops it (tasks/cancel)', async () => {
    const script: Script = (turn, last) => {
      if (turn === 0) return select('long_job');
      if (turn === 1) return { tool: 'mcp__taskrail__long_job', input: { seconds: 60 } };
      const local = /TaskStop with task_id "([^"]+)"/.exec(last?.text ?? '');
      if (turn === 2 && local !== null) return { tool: 'TaskStop', input: { task_id: local[1] } };
      return { text: 'Stopped.' };
    };
    const run = await session(serve, 'cancel', script);
    try {
      const placeholder = await waitFor('the placeholder', async () => run.model.resultOfStep(1), {
        timeoutMs: HOST_DEADLINE_MS,
      });
      const taskId = /server-side task ([^\s.]+)\./.exec(placeholder.text)?.[1];
      assert.ok(taskId);
      const cancelled = (line: Record<string, unknown>) =>
        line['message'] === 'task transition' &&
        line['taskId'] === taskId &&
        line['to'] === 'cancelled';
      const cancelRequest = (line: Record<string, unknown>) =>
        line['method'] === 'tasks/cancel' && line['taskId'] === taskId;
      await waitFor(
        'tasks/cancel and the task cancelled',
        async () => {
          const lines = logLines(serve);
          return lines.some(cancelled) && lines.some(cancelRequest) ? true : undefined;
        },
        { timeoutMs: HOST_DEADLINE_MS },
      );
    } finally {
      await run.close();
    }
  });
});
