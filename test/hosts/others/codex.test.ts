import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServe, tempDir, type Serve } from '../../client/support.js';
import { codex } from './hosts.js';
import { bigResult, quickTool, toolQuestion } from './rows.js';

const TOOLS = join(process.cwd(), '.build/test/hosts/others/tools.js');
const skip = codex.unavailable();
if (skip !== undefined) process.stdout.write(`# skipping the Codex CLI tests: ${skip}\n`);

describe(
  `Codex CLI ${codex.version} (codex exec) against taskrail serve`,
  { skip, concurrency: true },
  () => {
    const dir = tempDir('codex-host');
    let serve: Serve;
    before(async () => {
      serve = await startServe(dir.path, ['--tools', TOOLS]);
    });
    after(async () => {
      await serve.stop();
      dir.remove();
    });

    it('is the pinned version', () => {
      assert.equal(codex.versionLine(), `codex-cli ${codex.version}`);
    });
    it('quick tool: the result', (t) => quickTool(t, codex, serve.url));
    it('question: answered', (t) => toolQuestion(t, codex, serve.url, 'elicitation'));
    it('big result: all 200,000 characters through read_mcp_resource', (t) =>
      bigResult(t, codex, serve.url));
  },
);
