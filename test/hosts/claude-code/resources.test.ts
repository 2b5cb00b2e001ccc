import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServe, tempDir, type Serve } from '../../client/support.js';
import { FakeAnthropic, type Script, type ToolResultSeen } from './fake-anthropic.js';
import { claudeUnavailable, hostHome, runPrint } from './host.js';
import { noticeIn, type Notice } from '../others/model-policy.js';
import { BIG_CHARS, bigDumpText } from '../others/rows.js';
import { BIG_RESULT_CHARS, bigText, OUTPUT_LINES } from './tools.js';

const TOOLS = join(process.cwd(), '.build/test/hosts/claude-code/tools.js');
const skip = claudeUnavailable();
if (skip !== undefined) process.stdout.write(`# skipping the Claude Code tests: ${skip}\n`);

const READ = 'ReadMcpResourceTool';
const select = (...tools: string[]) => ({
  tool: 'ToolSearch',
  input: { query: `select:${tools.join(',')}` },
});
const read = (uri: string) => ({ tool: READ, input: { server: 'taskrail', uri } });

/** The text of a resource as ReadMcpResourceTool hands it to the model (the JSON of the read). */
function readText(seen: ToolResultSeen | undefined): string {
  assert.ok(seen !== undefined, 'the read reached the model');
  assert.equal(seen.isError, false, seen.text);
  const parsed = JSON.parse(seen.text) as { contents: { text: string }[] };
  return parsed.contents.map((content) => content.text).join('');
}

describe('Claude Code 2.1.328 -p: results of any size, output while running', { skip }, () => {
  const dir = tempDir('cc-resources');
  let serve: Serve;
  before(async () => {
    serve = await startServe(dir.path, [
      '--tools',
      TOOLS,
      '--fallback-tools',
      '--inline-wait',
      '1500ms',
    ]);
  });
  after(async () => {
    await serve.stop();
    dir.remove();
  });

  it('reads the last 2,000 characters of a shortened 400,000-character result through ReadMcpResourceTool', async () => {
    // The model does as the shortened text says: the URI and the total length come from it.
    const script: Script = (turn, last) => {
      if (turn === 0) return select('mcp__taskrail__big_result', READ);
      if (turn === 1) return { tool: 'mcp__taskrail__big_result', input: {} };
      if (turn === 2) {
        const text = last?.text ?? '';
        const uri = /taskrail:\/\/tasks\/[^\s/?]+\/result/.exec(text)?.[0];
        const total = /([\d,]+) characters/.exec(text)?.[1]?.replaceAll(',', '');
        if (uri === undefined || total === undefined) return { text: 'No link to read.' };
        return read(`${uri}?offset=${Number(total) - 2000}&length=2000`);
      }
      return { text: 'Read the end of the report.' };
    };
    const model = new FakeAnthropic(script);
    const host = hostHome(await model.start());
    try {
      const run = await runPrint(serve.url, host, 90_000);
      assert.equal(run.code, 0, run.stderr);
      const shortened = model.resultOfStep(1);
      assert.ok(shortened, JSON.stringify(model.results));
      assert.ok(shortened.text.length <= 50_000, `${shortened.text.length} characters`);
      assert.doesNotMatch(shortened.text, /persisted-output/);
      assert.match(shortened.text, /\[Resource link: [^\]]+\] taskrail:\/\/tasks\/\S+\/result/);
      assert.match(
        shortened.text,
        new RegExp(`${BIG_RESULT_CHARS.toLocaleString('en-US')}|${BIG_RESULT_CHARS}`),
      );
      assert.equal(readText(model.resultOfStep(2)), bigText().slice(-2000));
    } finally {
      await model.stop();
      host.remove();
    }
  });

  it('reads all 200,000 characters of a shortened result, exactly, through ReadMcpResourceTool', async (t) => {
    // The model takes the first part from the notice, then pages on from where it ends.
    let notice: Notice | undefined;
    let whole = '';
    let reads = 0;
    const started = Date.now();
    const script: Script = (turn, last) => {
      if (turn === 0) return select('mcp__taskrail__big_dump', READ);
      if (turn === 1) return { tool: 'mcp__taskrail__big_dump', input: {} };
      if (turn === 2) {
        notice = noticeIn(last?.text ?? '');
        if (notice === undefined) return { text: 'No notice.' };
        const text = last?.text ?? '';
        whole = text.slice(text.indexOf(']\n') + 2).slice(0, notice.shown);
      } else {
        whole += readText(last);
        reads += 1;
      }
      if (notice === undefined || whole.length >= notice.total) return { text: 'Read it all.' };
      const length = Math.min(40_000, notice.total - whole.length);
      return read(`${notice.uri}?offset=${whole.length}&length=${length}`);
    };
    const model = new FakeAnthropic(script);
    const host = hostHome(await model.start());
    try {
      const run = await runPrint(serve.url, host, 90_000);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(notice?.total, BIG_CHARS, JSON.stringify(model.results).slice(0, 2000));
      assert.ok(whole === bigDumpText(), `read ${whole.length} characters, not the whole text`);
      const ms = Date.now() - started;
      t.diagnostic(
        `host claude-code 2.1.328 | big result | ${whole.length} chars in ${reads} reads | ${(ms / 1000).toFixed(1)} s`,
      );
    } finally {
      await model.stop();
      host.remove();
    }
  });

  it("reads a running task's output through ReadMcpResourceTool", async () => {
    const release = join(dir.path, 'release-chatty');
    const script: Script = (turn, last) => {
      if (turn === 0) return select('mcp__taskrail__chatty_job', READ);
      if (turn === 1) return { tool: 'mcp__taskrail__chatty_job', input: { release } };
      if (turn === 2) {
        const taskId = /"taskId":"([^"]+)"/.exec(last?.text ?? '')?.[1];
        if (taskId === undefined) return { text: 'No task.' };
        return read(`taskrail://tasks/${taskId}/output`);
      }
      return { text: 'Saw the output.' };
    };
    const model = new FakeAnthropic(script);
    const host = hostHome(await model.start());
    try {
      const run = await runPrint(serve.url, host, 90_000);
      assert.equal(run.code, 0, run.stderr);
      // The job waits for the release file, which only this test writes, after the run.
      assert.equal(existsSync(release), false);
      assert.match(model.resultOfStep(1)?.text ?? '', /"next":"task_result"/);
      assert.equal(readText(model.resultOfStep(2)), OUTPUT_LINES.join(''));
    } finally {
      writeFileSync(release, '');
      await model.stop();
      host.remove();
    }
  });
});
