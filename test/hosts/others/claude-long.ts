import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { FakeAnthropic, type Script } from '../claude-code/fake-anthropic.js';
import { hostHome, runPrint } from '../claude-code/host.js';
import { handleIn } from './model-policy.js';
import { LONG_RUN_MS } from './rows.js';

const select = (...tools: string[]) => ({
  tool: 'ToolSearch',
  input: { query: `select:${tools.map((tool) => `mcp__taskrail__${tool}`).join(',')}` },
});

/** The 75 s row in Claude Code `-p` (a 60 s tool time-out): a handle, then task_result. */
export async function claudeLongTool(t: TestContext, serverUrl: string): Promise<void> {
  const lines: string[] = [];
  const step = (
    next: ReturnType<Script>,
    last: { text: string } | undefined,
  ): ReturnType<Script> => {
    if (last !== undefined) lines.push(`model sees  ${preview(last.text)}`);
    lines.push(
      'tool' in next
        ? `model calls ${next.tool} ${JSON.stringify(next.input)}`
        : `model says  ${next.text}`,
    );
    return next;
  };
  const script: Script = (turn, last) => {
    if (turn === 0) return step(select('slow_compute', 'task_result'), undefined);
    if (turn === 1)
      return step({ tool: 'mcp__taskrail__slow_compute', input: { seconds: 75 } }, last);
    const handle = handleIn(last?.text ?? '');
    if (handle?.next !== 'task_result') return step({ text: 'Done.' }, last);
    return step({ tool: 'mcp__taskrail__task_result', input: { taskId: handle.taskId } }, last);
  };
  const model = new FakeAnthropic(script);
  const host = hostHome(await model.start());
  const started = Date.now();
  try {
    const run = await runPrint(serverUrl, host, LONG_RUN_MS);
    const seen = JSON.stringify(model.results, null, 1).slice(0, 3000);
    assert.equal(run.code, 0, `claude exited ${String(run.code)}: ${run.stderr}\n${seen}`);
    assert.equal(handleIn(model.resultOfStep(1)?.text ?? '')?.next, 'task_result', seen);
    assert.match(
      model.results.at(-1)?.text ?? '',
      /Finished the computation after 75 second/,
      seen,
    );
    assert.ok(
      model.results.every((result) => !/timed out/i.test(result.text)),
      seen,
    );
    // Results: ToolSearch, the call (a handle), then each task_result.
    const follow = model.results.length - 2;
    const ms = Date.now() - started;
    const line = `handle, then result via ${follow} task_result | ${(ms / 1000).toFixed(1)} s`;
    t.diagnostic(`host claude-code 2.1.328 | 75 s tool | ${line}`);
    const dir = process.env['TASKRAIL_HOST_TRANSCRIPTS'];
    if (dir !== undefined && dir !== '') {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'claude-code--75-s-tool.txt'), `${lines.join('\n')}\n`);
    }
  } finally {
    await model.stop();
    host.remove();
  }
}

function preview(text: string): string {
  const cut = text.length > 200 ? `${text.slice(0, 200)}… (${text.length} chars)` : text;
  return cut.replace(/\n/g, '\n            ');
}
