import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ROOT = process.cwd();

export interface HostRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** A temp folder for one run's HOME and working folder, removed afterwards. */
export function tempHome(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `taskrail-${prefix}-`));
  return {
    path,
    remove: () => rmSync(path, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }),
  };
}

/**
 * Runs the host's setup script (scripts/setup-hosts.sh NAME); the reason the host cannot run,
 * or undefined when `bin` is there afterwards.
 */
export function hostUnavailable(name: string, bin: string): string | undefined {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return `the pinned ${name} is tested on linux-x64; this is ${process.platform}-${process.arch}`;
  }
  try {
    execFileSync('bash', [join(ROOT, 'scripts/setup-hosts.sh'), name], { stdio: 'pipe' });
  } catch (error) {
    return `${name} could not be installed (scripts/setup-hosts.sh ${name}): ${String(error).slice(0, 300)}`;
  }
  return existsSync(bin) ? undefined : `no binary at ${bin}`;
}

/** The caller's environment without any vendor's keys, tokens or endpoints. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  const vendor = /^(OPENAI|CODEX|GEMINI|GOOGLE|COPILOT|GH_|GITHUB|CLAUDE|ANTHROPIC|MCP_)/;
  for (const [key, value] of Object.entries(process.env)) {
    if (!vendor.test(key)) env[key] = value;
  }
  return env;
}

/** Runs a headless host to its end (SIGKILL at the deadline); resolves with its output. */
export function runHost(
  bin: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<HostRun> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** The host's version line, to assert on: a new version fails with the host's own words. */
export function versionOf(bin: string, env: NodeJS.ProcessEnv): string {
  return execFileSync(bin, ['--version'], { env, timeout: 60_000 }).toString().trim();
}
