import { describe, it } from 'node:test';
import { codex, copilot, gemini, type Host } from './hosts.js';
import { claudeUnavailable } from '../claude-code/host.js';
import { claudeLongTool } from './claude-long.js';
import { experimentalTool, longTool } from './rows.js';
import { serveTools, skipReason } from './suite.js';

/**
 * The 75 s row for every host at once (the hosts mostly wait, so they wait side by side): the
 * inline wait (45 s) ends first, the model gets a handle well inside the host's own time-out
 * (Codex 300 s, Gemini 10 min, Copilot ~180 s) and reaches the result through task_result.
 */
const hosts: [Host, string | undefined][] = [codex, gemini, copilot].map((host) => [
  host,
  skipReason(host, host.profile.name),
]);
const skipCopilot = hosts[2]?.[1];
const skipClaude = claudeUnavailable();

describe('a 75 s tool in every host, side by side', { concurrency: true }, () => {
  const serve = serveTools('long-hosts');

  for (const [host, skip] of hosts) {
    it(
      `${host.profile.name} ${host.version}: the result, inline or through a handle`,
      { skip },
      (t) => longTool(t, host, serve.url),
    );
  }
  it(
    'claude-code 2.1.328 -p: a handle within its 60 s, then the result',
    { skip: skipClaude },
    (t) => claudeLongTool(t, serve.url),
  );
  it(
    `copilot ${copilot.version} --experimental: an optional 75 s tool`,
    { skip: skipCopilot },
    (t) =>
      experimentalTool(t, copilot, serve.url, {
        name: 'slow_compute',
        seconds: 75,
        result: /Finished the computation after 75 second\(s\)\./,
      }),
  );
});
