/**
 * Builds of earlier mains for the `previous` section: each named commit checked out in a git
 * worktree of its own under the OS temp folder and built there with its own `npm run build`.
 * node_modules is a hard-link copy of this checkout's when both package-lock.json files are
 * the same (seconds, no disk), else `npm ci`. A built worktree is kept and reused by later
 * runs (like the http-10m file); delete the folder and `git worktree prune` to drop it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The line of docs/benchmarks.md that names the mains the guard compares with. */
const NAMED = /^Previous mains[^\n]*$/m;

const git = (args: string[], cwd = '.') =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/**
 * The commits the guard compares with: TASKRAIL_BENCH_PREVIOUS (comma-separated), else every
 * backquoted hash on the "Previous mains" line of docs/benchmarks.md, first the round's start.
 */
export function previousMains(page = 'docs/benchmarks.md'): string[] {
  const fromEnv = process.env['TASKRAIL_BENCH_PREVIOUS'];
  if (fromEnv !== undefined && fromEnv.trim() !== '')
    return fromEnv.split(',').map((c) => c.trim());
  const line = NAMED.exec(readFileSync(page, 'utf8'))?.[0];
  const hashes = [...(line ?? '').matchAll(/`([0-9a-f]{7,40})`/g)].map((m) => m[1] as string);
  if (hashes.length === 0) {
    throw new Error(
      `${page} names no previous main: add a line "Previous mains: \`<commit>\` …" ` +
        'or set TASKRAIL_BENCH_PREVIOUS=<commit>[,<commit>]',
    );
  }
  return hashes;
}

function installModules(tree: string, commit: string): void {
  let sameLock = true;
  try {
    git(['diff', '--quiet', commit, '--', 'package-lock.json']);
  } catch {
    sameLock = false; // git diff --quiet exits 1 when they differ
  }
  if (sameLock && existsSync('node_modules')) {
    execFileSync('cp', ['-al', resolve('node_modules'), join(tree, 'node_modules')]);
  } else {
    execFileSync('npm', ['ci', '--ignore-scripts=false', '--no-audit', '--no-fund'], {
      cwd: tree,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
}

/** The CLI of `commit` built in its own worktree: its dist/cli/main.js (absolute path). */
export function buildOf(commit: string): { commit: string; main: string } {
  const full = git(['rev-parse', '--verify', `${commit}^{commit}`]);
  const tree = join(tmpdir(), `taskrail-previous-${full.slice(0, 12)}`);
  const main = join(tree, 'dist', 'cli', 'main.js');
  if (existsSync(main)) return { commit: full, main };
  git(['worktree', 'prune']);
  if (!existsSync(tree)) git(['worktree', 'add', '--detach', tree, full]);
  if (!existsSync(join(tree, 'node_modules'))) installModules(tree, full);
  process.stderr.write(`previous: building ${full.slice(0, 7)} in ${tree}\n`);
  execFileSync('npm', ['run', 'build'], { cwd: tree, stdio: ['ignore', 'ignore', 'inherit'] });
  return { commit: full, main };
}
