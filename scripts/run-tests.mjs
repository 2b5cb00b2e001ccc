#!/usr/bin/env node
// Runs every compiled test file under .build/test with node's own test runner.
// Node 20's --test does not expand globs, so the files are listed here.
// `--test-timeout` bounds each file's whole run (node runs every file in its own process), so
// the few files that pack, install and type-check a project (`*.slow.test.js`) run in a second
// pass with a longer limit; every other file keeps 120 s.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const FILE_LIMIT_MS = 120_000;
const SLOW_FILE_LIMIT_MS = 600_000;

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...collect(path));
    else if (name.endsWith('.test.js')) out.push(path);
  }
  return out;
}

function runFiles(files, limitMs) {
  if (files.length === 0) return 0;
  const result = spawnSync(
    process.execPath,
    ['--test', '--test-concurrency=2', `--test-timeout=${limitMs}`, ...files],
    { stdio: 'inherit' },
  );
  return result.status ?? 1;
}

const only = process.argv.slice(2);
const files = collect('.build/test')
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
if (files.length === 0) {
  console.error('no test files found under .build/test (did `npm run pretest` run?)');
  process.exit(1);
}
const isSlow = (file) => file.endsWith('.slow.test.js');
const status = runFiles(
  files.filter((f) => !isSlow(f)),
  FILE_LIMIT_MS,
);
const slowStatus = runFiles(files.filter(isSlow), SLOW_FILE_LIMIT_MS);
process.exit(status !== 0 ? status : slowStatus);
