import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanEnv, hostUnavailable, ROOT, runHost, tempHome, type HostRun } from './run.js';

export const COPILOT_VERSION = '1.0.102';
export const COPILOT = join(ROOT, '.hosts/copilot/node_modules/.bin/copilot');
/** Copilot unpacks ~235 MB into the cache on first run: one cache for every test, not per HOME. */
const CACHE = join(ROOT, '.hosts/copilot/cache');

export const copilotUnavailable = (): string | undefined => hostUnavailable('copilot', COPILOT);

/** The environment of a headless, offline Copilot CLI in `home`, on BYOK to the scripted model. */
export function copilotEnv(home: string, modelUrl: string): NodeJS.ProcessEnv {
  return {
    ...cleanEnv(),
    HOME: home,
    XDG_CACHE_HOME: CACHE,
    COPILOT_HOME: join(home, '.copilot'),
    COPILOT_PROVIDER_BASE_URL: `${modelUrl}/v1`,
    COPILOT_PROVIDER_TYPE: 'openai',
    COPILOT_PROVIDER_API_KEY: 'scripted-stand-in',
    COPILOT_MODEL: 'gpt-5.4',
    COPILOT_OFFLINE: 'true',
    COPILOT_AUTO_UPDATE: 'false',
  };
}

/** `copilot -p` against the scripted model and the server (`--experimental` on request). */
export async function runCopilot(
  modelUrl: string,
  serverUrl: string,
  timeoutMs: number,
  options: { experimental?: boolean } = {},
): Promise<HostRun> {
  const home = tempHome('copilot');
  try {
    const work = join(home.path, 'work');
    mkdirSync(join(home.path, '.copilot'), { recursive: true });
    mkdirSync(work);
    const entry = { type: 'http', url: serverUrl, tools: ['*'] };
    writeFileSync(
      join(home.path, '.copilot/mcp-config.json'),
      JSON.stringify({ mcpServers: { taskrail: entry } }),
    );
    const args = ['-p', 'Use the taskrail tools.', '--allow-all-tools', '--no-auto-update'];
    args.push('--output-format', 'json');
    if (options.experimental === true) args.push('--experimental');
    return await runHost(COPILOT, args, {
      cwd: work,
      env: copilotEnv(home.path, modelUrl),
      timeoutMs,
    });
  } finally {
    home.remove();
  }
}
