import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { codex } from './hosts.js';
import { bigResult, quickTool, toolQuestion } from './rows.js';
import { serveTools, skipReason } from './suite.js';

const skip = skipReason(codex, 'the Codex CLI tests');

describe(
  `Codex CLI ${codex.version} (codex exec) against taskrail serve`,
  { skip, concurrency: true },
  () => {
    const serve = serveTools('codex-host');

    it('is the pinned version', () => {
      assert.equal(codex.versionLine(), `codex-cli ${codex.version}`);
    });
    it('quick tool: the result', (t) => quickTool(t, codex, serve.url));
    it('question: answered', (t) => toolQuestion(t, codex, serve.url, 'elicitation'));
    it('big result: all 200,000 characters through read_mcp_resource', (t) =>
      bigResult(t, codex, serve.url));
  },
);
