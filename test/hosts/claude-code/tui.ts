import { join } from 'node:path';
import { startServe, type Serve } from '../../client/support.js';
import { waitFor } from '../../helpers/wait.js';
import { FakeAnthropic, type Script } from './fake-anthropic.js';
import { claudeUnavailable, hostHome, TmuxHost } from './host.js';

export const TOOLS = join(process.cwd(), '.build/test/hosts/claude-code/tools.js');
export const skip = claudeUnavailable();
if (skip !== undefined)
  process.stdout.write(`# skipping the interactive Claude Code tests: ${skip}\n`);

export const select = (tool: string) => ({
  tool: 'ToolSearch',
  input: { query: `select:mcp__taskrail__${tool}` },
});

export function logLines(serve: Serve): Record<string, unknown>[] {
  return serve.child
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const PROMPT = 'use the taskrail tool';
/** Deadlines for what the host does: generous, so a busy machine does not fail the tests. */
export const HOST_DEADLINE_MS = 60_000;

/**
 * Waits until the screen has stopped changing. The TUI draws a widget before its key handler
 * is live, so a key sent the moment it appears can be dropped.
 */
export async function settled(tmux: TmuxHost, quietMs = 400): Promise<void> {
  let last = tmux.screen();
  let since = Date.now();
  await waitFor(
    'the screen to settle',
    async () => {
      const now = tmux.screen();
      if (now !== last) [last, since] = [now, Date.now()];
      return Date.now() - since >= quietMs ? true : undefined;
    },
    { timeoutMs: HOST_DEADLINE_MS, intervalMs: 50 },
  );
}

/**
 * Presses keys on a settled screen until `done` holds, pressing again when it does not within
 * a few seconds (only for keys whose repeat is harmless once `done` holds, such as Enter).
 */
export async function pressUntil(
  tmux: TmuxHost,
  keys: string[],
  what: string,
  done: () => boolean,
): Promise<void> {
  const deadline = Date.now() + HOST_DEADLINE_MS;
  while (Date.now() < deadline) {
    await settled(tmux);
    if (done()) return;
    tmux.keys(...keys);
    const retryAt = Math.min(deadline, Date.now() + 5_000);
    await waitFor(what, async () => done() || Date.now() >= retryAt || undefined, {
      timeoutMs: HOST_DEADLINE_MS,
      intervalMs: 50,
    });
    if (done()) return;
  }
  throw new Error(`timed out after ${HOST_DEADLINE_MS} ms pressing ${keys.join(' ')} for ${what}`);
}

/** Runs one interactive session: the prompt typed once the input box is up. */
export async function session(serve: Serve, name: string, script: Script | object[]) {
  const model = new FakeAnthropic(script as Script);
  const host = hostHome(await model.start());
  const tmux = new TmuxHost(serve.url, host, name);
  await waitFor('the input prompt', async () => (/❯/.test(tmux.screen()) ? true : undefined), {
    timeoutMs: HOST_DEADLINE_MS,
  });
  await settled(tmux);
  tmux.keys('-l', PROMPT);
  await pressUntil(tmux, ['Enter'], 'the prompt sent to the model', () =>
    model.userTexts.some((text) => text.includes(PROMPT)),
  );
  return {
    model,
    tmux,
    /** What the host showed and the model saw, for a failure message. */
    diagnose(): string {
      const seen = JSON.stringify({ results: model.results, userTexts: model.userTexts });
      return `screen:\n${tmux.screen()}\nmodel saw: ${seen.slice(0, 4000)}`;
    },
    async close() {
      await tmux.close();
      await model.stop();
      host.remove();
    },
  };
}

/** One `taskrail serve` with the scenario tools and JSON debug logs, per test file. */
export async function serveForHost(dir: string): Promise<Serve> {
  return startServe(dir, ['--tools', TOOLS, '--log-level', 'debug', '--log-format', 'json']);
}
