#!/usr/bin/env node
// `npm run bench`: builds, runs every benchmark in .build/bench (one process each, one after
// the other so they do not compete for the two cores), and writes docs/benchmarks.md.
// A benchmark prints, as its last stdout line, one JSON object:
//   { "title": "...", "description": "...", "columns": [...], "rows": [[...]...],
//     "goals": [{ "text": "...", "met": true|false }] }
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';

execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { stdio: 'inherit' });
execFileSync('npx', ['tsc', '-p', 'tsconfig.test.json'], { stdio: 'inherit' });

const only = process.argv.slice(2);
const files = readdirSync('.build/bench')
  .filter((f) => f.endsWith('.js') && !f.startsWith('_'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

const sections = [];
let failures = 0;
for (const file of files) {
  process.stderr.write(`bench: ${file}\n`);
  const run = spawnSync(process.execPath, ['--expose-gc', `.build/bench/${file}`], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    env: process.env,
    timeout: 10 * 60 * 1000,
  });
  const last = run.stdout.trim().split('\n').pop() ?? '';
  try {
    sections.push(JSON.parse(last));
  } catch {
    failures += 1;
    sections.push({ title: file, description: `did not report (exit ${run.status}): ${last}` });
  }
}

const cell = (v) =>
  typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : String(v);
const lines = [
  '# Benchmarks',
  '',
  'Written by `npm run bench`. Every figure is measured in the same run as its baseline and',
  'reported as a ratio to it, so the numbers compare across machines; absolute values are for',
  'this machine only. Medians over several rounds; the spread is min–max of the rounds.',
  '',
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${new Date().toISOString()}.`,
  '',
];
for (const s of sections) {
  lines.push(`## ${s.title}`, '');
  if (s.description) lines.push(s.description, '');
  if (s.columns && s.rows) {
    lines.push(`| ${s.columns.join(' | ')} |`, `|${s.columns.map(() => '---').join('|')}|`);
    for (const row of s.rows) lines.push(`| ${row.map(cell).join(' | ')} |`);
    lines.push('');
  }
  for (const g of s.goals ?? []) lines.push(`- ${g.met ? '✅ met' : '❌ not met'}: ${g.text}`);
  if ((s.goals ?? []).length > 0) lines.push('');
}
writeFileSync('docs/benchmarks.md', lines.join('\n'));
process.stderr.write(`bench: wrote docs/benchmarks.md (${sections.length} sections)\n`);
process.exit(failures === 0 ? 0 : 1);
