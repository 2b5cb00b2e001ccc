import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanEnv, hostUnavailable, ROOT, runHost, tempHome, type HostRun } from './run.js';

export const CODEX_VERSION = '0.171.0';
export const CODEX = join(ROOT, '.hosts/codex/node_modules/.bin/codex');
/** A model in Codex's catalogue: tools behind `tool_search`, results kept whole to ~48,000. */
export const CODEX_MODEL = 'gpt-5.5';

export const codexUnavailable = (): string | undefined => hostUnavailable('codex', CODEX);

function config(modelUrl: string, serverUrl: string): string {
  return [
    `model = "${CODEX_MODEL}"`,
    'model_provider = "fake"',
    'check_for_update_on_startup = false',
    'approval_policy = "never"',
    '',
    '[model_providers.fake]',
    'name = "scripted stand-in"',
    `base_url = "${modelUrl}/v1"`,
    'wire_api = "responses"',
    'env_key = "FAKE_OPENAI_KEY"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    '[mcp_servers.taskrail]',
    `url = "${serverUrl}"`,
    'default_tools_approval_mode = "approve"',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[features]',
    'apps = false',
    'plugins = false',
    '',
  ].join('\n');
}

/** `codex exec` against the scripted model and the server, in a temp CODEX_HOME and HOME. */
export async function runCodex(
  modelUrl: string,
  serverUrl: string,
  timeoutMs: number,
): Promise<HostRun & { last: string }> {
  const home = tempHome('codex');
  try {
    const codexHome = join(home.path, '.codex');
    const work = join(home.path, 'work');
    mkdirSync(codexHome);
    mkdirSync(work);
    writeFileSync(join(codexHome, 'config.toml'), config(modelUrl, serverUrl));
    const env = { ...cleanEnv(), HOME: home.path, CODEX_HOME: codexHome, FAKE_OPENAI_KEY: 'x' };
    const lastFile = join(home.path, 'last.txt');
    const args = ['exec', '--skip-git-repo-check', '--strict-config', '--json', '-o', lastFile];
    const run = await runHost(CODEX, [...args, 'Use the taskrail tools.'], {
      cwd: work,
      env,
      timeoutMs,
    });
    let last = '';
    try {
      last = (await import('node:fs')).readFileSync(lastFile, 'utf8');
    } catch {
      // No final message.
    }
    return { ...run, last };
  } finally {
    home.remove();
  }
}
