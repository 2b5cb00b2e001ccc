#!/usr/bin/env node
// Runs every compiled test file under .build/test with node's own test runner.
// Node 20's --test does not expand globs, so the files are listed here.
// `--test-timeout` bounds each file's whole run (node runs every file in its own process), so
// the few files that pack, install and type-check a project (`*.slow.test.js`) run in a second
// pass with a longer limit; every other file keeps 120 s.
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
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

// A CI log is often read from its tail only, so every failure is repeated at the very end:
// a second TAP reporter writes to a file that is read back once the run is over.
function runFiles(files, limitMs, tapFile) {
  if (files.length === 0) return 0;
  rmSync(tapFile, { force: true });
  const reporters = ['--test-reporter=tap', '--test-reporter-destination=stdout'];
  reporters.push('--test-reporter=tap', `--test-reporter-destination=${tapFile}`);
  const result = spawnSync(
    process.execPath,
    ['--test', '--test-concurrency=2', `--test-timeout=${limitMs}`, ...reporters, ...files],
    { stdio: 'inherit' },
  );
  return result.status ?? 1;
}

/** The `not ok` entries of a TAP file with their diagnostics, innermost first. */
function failuresIn(tapFile) {
  let lines;
  try {
    lines = readFileSync(tapFile, 'utf8').split('\n');
  } catch {
    return [];
  }
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const match = /^(\s*)not ok \d+ - (.*)$/.exec(line);
    // A `todo` test's failure is expected and named in its reason; it fails no run.
    if (!match || / # TODO( |$)/.test(match[2])) continue;
    const indent = match[1];
    const block = [line];
    for (let j = i + 1; j < lines.length && block.length < 40; j++) {
      block.push(lines[j]);
      if (lines[j] === `${indent}  ...`) break;
    }
    out.push(block.join('\n'));
  }
  return out;
}

function hostFiguresIn(tapFile) {
  try {
    return readFileSync(tapFile, 'utf8')
      .split('\n')
      .filter((line) => /^\s*# host \S+ \S+ \|/.test(line))
      .map((line) => line.trim());
  } catch {
    return [];
  }
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
const tapFiles = ['.build/test-results.tap', '.build/test-results-slow.tap'];
const status = runFiles(
  files.filter((f) => !isSlow(f)),
  FILE_LIMIT_MS,
  tapFiles[0],
);
const slowStatus = runFiles(files.filter(isSlow), SLOW_FILE_LIMIT_MS, tapFiles[1]);
const failures = tapFiles.flatMap(failuresIn);
// The real-host tests (test/hosts) print one `# host NAME VERSION | row | figure | time` line
// per host and row of the Hosts contract; they are gathered here so a CI log lists them all.
const figures = tapFiles.flatMap(hostFiguresIn);
if (figures.length > 0) {
  console.log(`\n# hosts × rows of the Hosts contract (${figures.length}):`);
  for (const line of figures) console.log(line);
}
if (failures.length > 0) {
  console.log(`\n# ${failures.length} failing entries (tests and the suites holding them):`);
  for (const failure of failures) console.log(failure);
}
process.exit(status !== 0 ? status : slowStatus);
