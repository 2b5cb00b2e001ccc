import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

/** Packing taskrail and installing the tarball into a fresh project, shared by the package tests. */
export const run = promisify(execFile);
export const ROOT = resolve(new URL('../../..', import.meta.url).pathname);
export const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

export function npm(args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  return run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    maxBuffer: 16 * 1024 * 1024,
  });
}

/**
 * `npm pack` into `work`, then a project at `work/app` with `packageJson` and the tarball plus
 * `extra` installed. --ignore-scripts: the tarball is built from the dist/ that pretest just
 * compiled, and the native SQLite build (a download from GitHub) is not what these tests are
 * about. --prefer-offline: everything else comes from the npm cache when it is there.
 */
export async function installPacked(
  work: string,
  packageJson: object,
  extra: string[],
): Promise<string> {
  await npm(['pack', '--ignore-scripts', '--pack-destination', work], ROOT);
  const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'));
  assert.ok(tarball, 'npm pack wrote no tarball');
  const app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify(packageJson));
  await npm(
    ['install', '--ignore-scripts', '--prefer-offline', join(work, tarball), ...extra],
    app,
  );
  return app;
}
