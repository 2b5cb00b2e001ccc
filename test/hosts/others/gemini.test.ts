import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gemini } from './hosts.js';
import { bigResult, quickTool, toolQuestion } from './rows.js';
import { serveTools, skipReason } from './suite.js';

const skip = skipReason(gemini, 'the Gemini CLI tests');

describe(
  `Gemini CLI ${gemini.version} (gemini -p) against taskrail serve`,
  { skip, concurrency: true },
  () => {
    const serve = serveTools('gemini-host');

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
