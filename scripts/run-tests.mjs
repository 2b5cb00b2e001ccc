#!/usr/bin/env node
// Runs every compiled test file under .build/test with node's own test runner.
// Node 20's --test does not expand globs, so the files are listed here.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...collect(path));
    else if (name.endsWith('.test.js')) out.push(path);
  }
  return out;
}

const only = process.argv.slice(2);
const files = collect('.build/test')
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
if (files.length === 0) {
  console.error('no test files found under .build/test (did `npm run pretest` run?)');
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ['--test', '--test-concurrency=2', '--test-timeout=120000', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
