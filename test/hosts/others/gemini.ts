import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanEnv, hostUnavailable, ROOT, runHost, tempHome, type HostRun } from './run.js';

export const GEMINI_VERSION = '0.61.0';
export const GEMINI = join(ROOT, '.hosts/gemini-cli/node_modules/.bin/gemini');

export const geminiUnavailable = (): string | undefined => hostUnavailable('gemini-cli', GEMINI);

function settings(serverUrl: string): Json {
  return {
    mcpServers: { taskrail: { httpUrl: serverUrl, trust: true } },
    security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
  };
}
type Json = Record<string, unknown>;

/** The environment of a headless Gemini CLI in `home`, talking to the scripted model. */
export function geminiEnv(home: string, modelUrl: string): NodeJS.ProcessEnv {
  return {
    ...cleanEnv(),
    HOME: home,
    GEMINI_CLI_HOME: home,
    GOOGLE_GEMINI_BASE_URL: modelUrl,
    GEMINI_API_KEY: 'scripted-stand-in',
    GEMINI_CLI_NO_RELAUNCH: 'true',
  };
}

/** `gemini -p` against the scripted model and the server, in a temp GEMINI_CLI_HOME and HOME. */
export async function runGemini(
  modelUrl: string,
  serverUrl: string,
  timeoutMs: number,
): Promise<HostRun> {
  const home = tempHome('gemini');
  try {
    const work = join(home.path, 'work');
    mkdirSync(join(home.path, '.gemini'), { recursive: true });
    mkdirSync(work);
    writeFileSync(join(home.path, '.gemini/settings.json'), JSON.stringify(settings(serverUrl)));
    const args = ['-p', 'Use the taskrail tools.', '--output-format', 'json'];
    return await runHost(GEMINI, args, {
      cwd: work,
      env: geminiEnv(home.path, modelUrl),
      timeoutMs,
    });
  } finally {
    home.remove();
  }
}
