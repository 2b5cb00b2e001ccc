import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runCli, startServe, tempDir, type Serve } from '../client/support.js';

/**
 * The Show of issue 14 at test scale: `serve --fallback-tools --inline-wait 1s`, a 3 s tool,
 * `taskrail call --no-tasks`: a handle after the wait, then task_result brings the result.
 * (By hand: a 75 s tool with --inline-wait 5s; docs/hosts.md.)
 */
describe('taskrail call --no-tasks follows a fallback handle', () => {
  const dir = tempDir('handle');
  let serve: Serve;
  before(async () => {
    serve = await startServe(dir.path, [
      '--fallback-tools',
      '--inline-wait',
      '1s',
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

  it('gets a handle past the inline wait and the result through task_result', async () => {
    const r = await runCli(
      ['call', serve.url, 'slow_compute', '--args', '{"seconds":3,"label":"long"}', '--no-tasks'],
      `${dir.path}/home`,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'Finished long after 3 second(s).\n');
    assert.match(
      r.stderr,
      /task \S+ is still running \(computing long \(3s\)\); asking task_result/,
    );
    const logLines = serve.child
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    const requests = logLines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line['message'] === 'request' && line['method'] === 'tools/call');
    assert.equal(requests[0]?.['tool'], 'slow_compute');
    // The handle came after the inline wait (1 s), not at once and not at the end of the tool.
    assert.ok(Number(requests[0]?.['durationMs']) >= 950, JSON.stringify(requests[0]));
    assert.ok(requests.slice(1).every((line) => line['tool'] === 'task_result'));
    assert.ok(requests.length >= 3, 'the call, then at least two task_result rounds');
    const created = logLines.filter((line) => line.includes('"task created"'));
    assert.equal(created.length, 1, 'one task for the whole exchange');
  });
});
