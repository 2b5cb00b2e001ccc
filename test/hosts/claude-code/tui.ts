import { join } from 'node:path';
import { startServe, type Serve } from '../../client/support.js';
import { waitFor } from '../../helpers/wait.js';
import { FakeAnthropic, type Script } from './fake-anthropic.js';
import { claudeUnavailable, hostHome, TmuxHost } from './host.js';

export const TOOLS = join(process.cwd(), '.build/test/hosts/claude-code/tools.js');
export const skip = claudeUnavailable();

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

/** Runs one interactive session: the prompt typed once the input box is up. */
export async function session(serve: Serve, name: string, script: Script | object[]) {
  const model = new FakeAnthropic(script as Script);
  const host = hostHome(await model.start());
  const tmux = new TmuxHost(serve.url, host, name);
  await waitFor('the input prompt', async () => (/❯/.test(tmux.screen()) ? true : undefined), {
    timeoutMs: 30_000,
  });
  tmux.type('use the taskrail tool');
  return {
    model,
    tmux,
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
