import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { copilot } from './hosts.js';
import { bigResult, experimentalTool, quickTool, toolQuestion } from './rows.js';
import { serveTools, skipReason } from './suite.js';

const skip = skipReason(copilot, 'the Copilot CLI tests');

describe(
  `Copilot CLI ${copilot.version} (copilot -p) against taskrail serve`,
  { skip, concurrency: true },
  () => {
    const serve = serveTools('copilot-host');

    it('is the pinned version', () => {
      assert.match(
        copilot.versionLine(),
        new RegExp(`^GitHub Copilot CLI ${copilot.version.replaceAll('.', '\\.')}\\.`),
      );
    });
    it('quick tool: the result', (t) => quickTool(t, copilot, serve.url));
    it('question: answered', (t) => toolQuestion(t, copilot, serve.url, 'elicitation'));
    it('big result: all 200,000 characters through task_result with offset', (t) =>
      bigResult(t, copilot, serve.url));
  },
);

describe(
  `Copilot CLI ${copilot.version} --experimental (declares tasks)`,
  { skip, concurrency: true },
  () => {
    const serve = serveTools('copilot-exp');

    it('a required tool runs as a task to its result', (t) =>
      experimentalTool(t, copilot, serve.url, {
        name: 'required_compute',
        seconds: 3,
        required: true,
        result: /Required task finished after 3s\./,
      }));
    it('an optional tool still answers', (t) =>
      experimentalTool(t, copilot, serve.url, {
        name: 'slow_compute',
        seconds: 1,
        result: /Finished the computation after 1 second\(s\)\./,
      }));
  },
);
