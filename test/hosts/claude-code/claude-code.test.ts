import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServe, tempDir, type Serve } from '../../client/support.js';
import { FakeAnthropic, type Script } from './fake-anthropic.js';
import { claudeUnavailable, hostHome, runPrint } from './host.js';

const TOOLS = join(process.cwd(), '.build/test/hosts/claude-code/tools.js');
const skip = claudeUnavailable();
if (skip !== undefined) process.stdout.write(`# skipping the Claude Code tests: ${skip}\n`);

const select = (...tools: string[]) => ({
  tool: 'ToolSearch',
  input: { query: `select:${tools.map((t) => `mcp__taskrail__${t}`).join(',')}` },
});

/** The `-p` log lines of the server: JSON, one per request or transition. */
function logLines(serve: Serve): Record<string, unknown>[] {
  return serve.child
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('Claude Code 2.1.328 print mode (-p) against taskrail serve', { skip }, () => {
  const dir = tempDir('cc-print');
  let serve: Serve;
  before(async () => {
    serve = await startServe(dir.path, [
      '--tools',
      TOOLS,
      '--fallback-tools',
      '--inline-wait',
      '1500ms',
      '--log-level',
      'debug',
      '--log-format',
      'json',
    ]);
  });
  after(async () => {
    await serve.stop();
    dir.remove();
  });

  it('hands the model the text of a structured result', async (t) => {
    const started = Date.now();
    const model = new FakeAnthropic([
      select('build_report'),
      { tool: 'mcp__taskrail__build_report', input: { topic: 'caching', sections: 1 } },
      { text: 'Done.' },
    ]);
    const host = hostHome(await model.start());
    try {
      const run = await runPrint(serve.url, host, 60_000);
      assert.equal(run.code, 0, run.stderr);
      const seen = model.resultOfStep(1);
      assert.ok(seen, JSON.stringify(model.results));
      // -p answers every question `cancel`, so the report is for everyone.
      assert.match(seen.text, /Report on caching \(for everyone\)/);
      assert.match(seen.text, /Section 1: findings about caching/);
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      t.diagnostic(`host claude-code 2.1.328 | quick tool | result in 1 call | ${seconds} s`);
    } finally {
      await model.stop();
      host.remove();
    }
  });

  it('completes a tool longer than the host time-out through the handle and task_result', async () => {
    const script: Script = (turn, last) => {
      if (turn === 0) return select('long_job', 'task_result');
      if (turn === 1) return { tool: 'mcp__taskrail__long_job', input: { seconds: 6 } };
      const handle = /"next":"task_result"[^}]*/.test(last?.text ?? '')
        ? /"taskId":"([^"]+)"/.exec(last?.text ?? '')
        : null;
      if (handle !== null)
        return { tool: 'mcp__taskrail__task_result', input: { taskId: handle[1] } };
      return { text: 'The job is done.' };
    };
    const model = new FakeAnthropic(script);
    // The host gives up on a call after 4 s here (60 s by default): the job takes 6 s.
    const host = hostHome(await model.start(), { MCP_TOOL_TIMEOUT: '4000' });
    try {
      const run = await runPrint(serve.url, host, 90_000);
      assert.equal(run.code, 0, run.stderr);
      const first = model.resultOfStep(1);
      assert.ok(first, JSON.stringify(model.results));
      assert.match(first.text, /"next":"task_result"/);
      assert.match(first.text, /Call task_result with/);
      const final = model.results.at(-1);
      assert.match(final?.text ?? '', /long job finished after 6s/);
      assert.ok(
        model.results.every((r) => !/timed out/i.test(r.text)),
        JSON.stringify(model.results),
      );
      const created = logLines(serve).filter(
        (line) => line['message'] === 'task created' && line['tool'] === 'long_job',
      );
      assert.equal(created.length, 1, 'one task, however many task_result rounds');
    } finally {
      await model.stop();
      host.remove();
    }
  });
});
