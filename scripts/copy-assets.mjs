#!/usr/bin/env node
// tsc compiles only TypeScript: this copies the files the compiled code reads at run time
// (the Redis store's Lua scripts, the dashboard's browser script and stylesheet under an
// `assets/` folder) from src/ to each output folder given, keeping their paths.
// Usage: node scripts/copy-assets.mjs dist .build/src
import { cpSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ASSET = /\.lua$|[\\/]assets[\\/][^\\/]+\.(js|css)$/;

function assets(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...assets(path));
    else if (ASSET.test(path)) out.push(path);
  }
  return out;
}

const targets = process.argv.slice(2);
if (targets.length === 0) {
  console.error('usage: node scripts/copy-assets.mjs OUT_DIR...');
  process.exit(2);
}
const files = assets('src');
for (const target of targets) {
  for (const file of files) cpSync(file, join(target, relative('src', file)));
}
console.log(`copied ${files.length} asset file(s) to ${targets.join(', ')}`);
