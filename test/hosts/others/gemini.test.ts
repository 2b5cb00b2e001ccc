import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServe, tempDir, type Serve } from '../../client/support.js';
import { gemini } from './hosts.js';
import { bigResult, quickTool, toolQuestion } from './rows.js';

const TOOLS = join(process.cwd(), '.build/test/hosts/others/tools.js');
const skip = gemini.unavailable();
if (skip !== undefined) process.stdout.write(`# skipping the Gemini CLI tests: ${skip}\n`);

describe(
  `Gemini CLI ${gemini.version} (gemini -p) against taskrail serve`,
  { skip, concurrency: true },
  () => {
    const dir = tempDir('gemini-host');
    let serve: Serve;
    before(async () => {
      serve = await startServe(dir.path, ['--tools', TOOLS]);
    });
    after(async () => {
      await serve.stop();
      dir.remove();
    });

    it('is the pinned version', () => {
      assert.equal(gemini.versionLine(), gemini.version);
    });
    it('quick tool: the result', (t) => quickTool(t, gemini, serve.url));
    it('question: answered through task_answer', (t) =>
      toolQuestion(t, gemini, serve.url, 'task_answer'));
    it('big result: all 200,000 characters through read_mcp_resource', (t) =>
      bigResult(t, gemini, serve.url));
  },
);
