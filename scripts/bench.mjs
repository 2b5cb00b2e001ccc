#!/usr/bin/env node
// `npm run bench`: builds, runs every benchmark in .build/bench (one process each, one after
// the other so they do not compete for the cores), and writes docs/benchmarks.md.
// `npm run bench -- --only NAME [--only NAME2]` (or `--only NAME,NAME2`) runs only those sections
// (NAME is the file name without .js, e.g. `http`, `http-redis`) and replaces just their parts of
// docs/benchmarks.md.
// A benchmark prints, as its last stdout line, one JSON object:
//   { "title": "...", "description": "...", "columns": [...], "rows": [[...]...],
//     "goals": [{ "text": "...", "met": true|false }] }
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';

const PAGE = 'docs/benchmarks.md';
const MARK = /^<!-- bench:([\w-]+) -->$/;

function parseArgs(argv) {
  const only = [];
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--only' && argv[i + 1] !== undefined) only.push(argv[(i += 1)]);
    else if (argv[i]?.startsWith('--only=')) only.push(argv[i].slice('--only='.length));
    else only.push(argv[i]); // the older form: `npm run bench -- NAME`
  }
  return only.flatMap((names) => names.split(',')).filter((name) => name !== '');
}

const all = () =>
  readdirSync('.build/bench')
    .filter((f) => f.endsWith('.js'))
    .map((f) => f.slice(0, -3))
    .sort();

function selected(only) {
  const names = all();
  if (only.length === 0) return names;
  const picked = only.map((o) => (names.includes(o) ? [o] : names.filter((n) => n.includes(o))));
  const unmatched = only.filter((_, i) => picked[i]?.length === 0);
  if (unmatched.length > 0)
    throw new Error(
      `no benchmark matches ${unmatched.join(', ')}; name one or more of: ${names.join(', ')}`,
    );
  return [...new Set(picked.flat())];
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

function run(name) {
  process.stderr.write(`bench: ${name}\n`);
  const before = load();
  const started = Date.now();
  const child = spawnSync(process.execPath, ['--expose-gc', `.build/bench/${name}.js`], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    env: process.env,
    // A safety net, not a budget: the first run of a ten-million section fills its cached
    // dataset (about 20 minutes for redis-10m at load 8–12); later runs take 1–2 minutes.
    timeout: 45 * 60 * 1000,
  });
  const seconds = Math.round((Date.now() - started) / 1000);
  const last = child.stdout.trim().split('\n').pop() ?? '';
  const at = { before, after: load(), seconds, when: new Date().toISOString() };
  try {
    return { name, ok: true, at, ...JSON.parse(last) };
  } catch {
    return {
      name,
      ok: false,
      at,
      title: name,
      description: `did not report (exit ${child.status}): ${last}`,
    };
  }
}

const cell = (v) =>
  typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : String(v);

function render(s) {
  const cores = cpus().length;
  const busy = Math.max(
    ...[s.at.before, s.at.after].flatMap((l) => l.split(' ').slice(0, 1).map(Number)),
  );
  const loadNote =
    busy > cores ? ' **Measured under load** (1-minute load above the core count).' : '';
  const lines = [`<!-- bench:${s.name} -->`, `## ${s.title}`, ''];
  lines.push(
    `_Run ${s.at.when} in ${s.at.seconds} s; load average (1/5/15 min) before: ${s.at.before}, after: ${s.at.after} on ${cores} cores._${loadNote}`,
    '',
  );
  if (s.description) lines.push(s.description, '');
  if (s.columns && s.rows && s.columns.length > 0) {
    lines.push(`| ${s.columns.join(' | ')} |`, `|${s.columns.map(() => '---').join('|')}|`);
    for (const row of s.rows) lines.push(`| ${row.map(cell).join(' | ')} |`);
    lines.push('');
  }
  for (const g of s.goals ?? []) lines.push(`- ${g.met ? '✅ met' : '❌ not met'}: ${g.text}`);
  if ((s.goals ?? []).length > 0) lines.push('');
  return lines.join('\n');
}

/** The sections of the current page, by benchmark name (text between markers). */
function existingSections() {
  if (!existsSync(PAGE)) return new Map();
  const sections = new Map();
  let current;
  for (const line of readFileSync(PAGE, 'utf8').split('\n')) {
    const mark = MARK.exec(line);
    if (mark !== null) sections.set((current = mark[1]), [line]);
    else if (current !== undefined) sections.get(current).push(line);
  }
  return new Map([...sections].map(([k, v]) => [k, v.join('\n').trimEnd() + '\n']));
}

/** The mains the `previous` section builds and compares with: kept from the page, moved by hand each round. */
function previousMainsLine() {
  const line = existsSync(PAGE) ? /^Previous mains[^\n]*$/m.exec(readFileSync(PAGE, 'utf8')) : null;
  return line?.[0] ?? "Previous mains (the `previous` section's baselines): none named yet.";
}

const header = [
  '# Benchmarks',
  '',
  'Written by `npm run bench` (some sections: `npm run bench -- --only NAME,NAME2`). Every goal is a',
  'ratio to a baseline measured in the same run, so it compares across machines; absolute',
  'values are for this machine only. Medians over several rounds; the spread is min–max of the',
  'rounds. Each section notes the load average it ran under: on a shared machine the absolute',
  'figures of a section run under load are low, and its ratios noisier.',
  '',
  'Two builds in one run (a refactor\'s "within 5%"): build the other checkout with `npm run build`,',
  'then `npm run pretest && node .build/bench/compare/builds.js --before OTHER/dist/cli/main.js`.',
  'It serves both builds on SQLite and drives the same 2026-07-28 calls at each, interleaved',
  'round by round, and prints after/before ratios of req/s and of server CPU per request.',
  'The `previous` section does the same for the mains named below, each built in a worktree of its',
  'own, and holds this build to ≥ 1.0× them: the guard against giving speed away in a round.',
  '',
  previousMainsLine(),
  '',
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}.`,
  '',
].join('\n');

execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { stdio: 'inherit' });
execFileSync('npx', ['tsc', '-p', 'tsconfig.test.json'], { stdio: 'inherit' });
execFileSync(process.execPath, ['scripts/copy-assets.mjs', 'dist', '.build/src'], {
  stdio: 'inherit',
});
const only = parseArgs(process.argv.slice(2));
const names = selected(only);
const sections = only.length === 0 ? new Map() : existingSections();
let failures = 0;
for (const name of names) {
  const result = run(name);
  if (!result.ok) failures += 1;
  sections.set(name, render(result));
}
const known = all();
// Sections written by hand (a `<!-- bench:NAME -->` marker with no benchmark file of that name)
// keep their place at the end. Text written by hand under a benchmark's own marker is lost when
// that benchmark runs again: it needs a marker of its own.
const order = [
  ...known.filter((n) => sections.has(n)),
  ...[...sections.keys()].filter((n) => !known.includes(n)),
];
writeFileSync(PAGE, [header, ...order.map((n) => sections.get(n))].join('\n'));
process.stderr.write(`bench: wrote ${PAGE} (${names.length} section(s) run)\n`);
process.exit(failures === 0 ? 0 : 1);
