import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = process.cwd();
export const CLAUDE = join(
  ROOT,
  '.hosts/claude-code/node_modules/@anthropic-ai/claude-code-linux-x64/claude',
);
const API_KEY = 'sk-ant-api03-taskrail-test-key-000000000000';

/** Installs the pinned binary if needed; the reason it cannot run, or undefined when it can. */
export function claudeUnavailable(): string | undefined {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return `the pinned Claude Code binary is linux-x64; this is ${process.platform}-${process.arch}`;
  }
  try {
    execFileSync('bash', [join(ROOT, 'scripts/setup-claude-code.sh')], { stdio: 'pipe' });
  } catch (error) {
    return `Claude Code could not be installed (scripts/setup-claude-code.sh): ${String(error).slice(0, 300)}`;
  }
  return existsSync(CLAUDE) ? undefined : `no binary at ${CLAUDE}`;
}

export interface HostHome {
  home: string;
  work: string;
  env: NodeJS.ProcessEnv;
  remove(): void;
}

/**
 * A temp HOME with `~/.claude.json` pre-seeded (onboarding done, the key approved, the folder
 * trusted, upsells seen) and an environment stripped of the caller's CLAUDE*, ANTHROPIC_*, MCP_*.
 */
export function hostHome(apiUrl: string, extra: NodeJS.ProcessEnv = {}): HostHome {
  const home = mkdtempSync(join(tmpdir(), 'taskrail-cc-home-'));
  const work = mkdtempSync(join(tmpdir(), 'taskrail-cc-work-'));
  writeFileSync(
    join(home, '.claude.json'),
    JSON.stringify({
      hasCompletedOnboarding: true,
      lastOnboardingVersion: '2.1.328',
      customApiKeyResponses: { approved: [API_KEY.slice(-20)], rejected: [] },
      projects: { [work]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
      fullscreenUpsellSeen: true,
      hasSeenTasksHint: true,
    }),
  );
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(CLAUDE|ANTHROPIC_|MCP_)/.test(key)) env[key] = value;
  }
  Object.assign(env, {
    HOME: home,
    ANTHROPIC_BASE_URL: apiUrl,
    ANTHROPIC_API_KEY: API_KEY,
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    ...extra,
  });
  return {
    home,
    work,
    env,
    remove() {
      rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
      rmSync(work, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    },
  };
}

export function mcpConfig(url: string): string {
  return JSON.stringify({ mcpServers: { taskrail: { type: 'http', url } } });
}

/** `claude -p PROMPT` against the server; resolves with its exit code and output. */
export function runPrint(
  serverUrl: string,
  host: HostHome,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const args = [
    '-p',
    'Use the taskrail tools.',
    '--mcp-config',
    mcpConfig(serverUrl),
    '--strict-mcp-config',
    '--allowedTools',
    'mcp__taskrail',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(CLAUDE, args, {
      cwd: host.work,
      env: host.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Claude Code in interactive mode inside a detached tmux session. */
export class TmuxHost {
  readonly #session: string;

  constructor(serverUrl: string, host: HostHome, name: string) {
    this.#session = `taskrail-${name}-${process.pid}`;
    const env = Object.entries(host.env)
      .filter(([key]) => /^(HOME|PATH|LANG|ANTHROPIC_|DISABLE_|CLAUDE_|MCP_)/.test(key))
      .map(([key, value]) => `${key}=${value ?? ''}`);
    const args = [...['env', ...env, CLAUDE], '--mcp-config', mcpConfig(serverUrl)];
    args.push('--strict-mcp-config', '--allowedTools', 'mcp__taskrail');
    const command = args.map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`).join(' ');
    execFileSync('tmux', ['new-session', '-d', '-s', this.#session, '-x', '200', '-y', '50']);
    execFileSync('tmux', [
      'send-keys',
      '-t',
      this.#session,
      `cd '${host.work}' && exec ${command}`,
      'Enter',
    ]);
  }

  screen(): string {
    return execFileSync('tmux', ['capture-pane', '-p', '-t', this.#session]).toString();
  }

  keys(...keys: string[]): void {
    execFileSync('tmux', ['send-keys', '-t', this.#session, ...keys]);
  }

  /** Types a line (text, then Enter as a separate key so it is not taken as a paste). */
  type(text: string): void {
    this.keys('-l', text);
    this.keys('Enter');
  }

  /** Stops the host process (the pane runs it by exec) and waits for it before the session goes. */
  async close(): Promise<void> {
    let pid: number | undefined;
    try {
      const out = execFileSync('tmux', ['display', '-p', '-t', this.#session, '#{pane_pid}']);
      pid = Number(out.toString().trim());
      process.kill(pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
    const deadline = Date.now() + 10_000;
    while (pid !== undefined && alive(pid) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    try {
      execFileSync('tmux', ['kill-session', '-t', this.#session], { stdio: 'ignore' });
    } catch {
      // Already gone.
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
