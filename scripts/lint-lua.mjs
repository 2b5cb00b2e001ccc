#!/usr/bin/env node
// Lints the Redis store's Lua scripts (src/**/lua/*.lua) with luaparse, as Redis runs them:
// each script after its folder's prelude.lua, in Lua 5.1. Checks
// - syntax;
// - no globals besides what Redis gives a script (a typo'd local would be a runtime error);
// - every key a command touches is KEYS[...] (Redis Cluster needs each key declared; a key built
//   inside a script may sit in another slot), or a parameter of a local helper function that
//   every call of the helper fills with KEYS[...]. Channels and values are not keys.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import luaparse from 'luaparse';

const GLOBALS = new Set(['redis', 'KEYS', 'ARGV', 'cjson', 'tonumber', 'tostring', 'string']);
for (const name of ['math', 'table', 'ipairs', 'pairs', 'type', 'unpack', 'next', 'error']) {
  GLOBALS.add(name);
}
/** Commands whose arguments after the name are all keys (DEL, EXISTS) or whose first one is. */
const ALL_KEYS = new Set(['DEL', 'EXISTS', 'UNLINK']);
const FIRST_KEY = new Set(
  'GET SET HGET HSET HMGET HDEL HGETALL ZADD ZCARD ZREM ZRANGE ZRANGEBYSCORE ZREMRANGEBYSCORE ZSCORE PEXPIRE PERSIST PTTL'.split(
    ' ',
  ),
);
const NO_KEYS = new Set(['TIME', 'PUBLISH']);

function luaFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...luaFiles(path));
    else if (name.endsWith('.lua') && name !== 'prelude.lua') out.push(path);
  }
  return out;
}

/** Visits every node with the innermost function declaration around it. */
function walk(node, visit, fn) {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) return node.forEach((child) => walk(child, visit, fn));
  if (typeof node.type === 'string') visit(node, fn);
  const inner = node.type === 'FunctionDeclaration' ? node : fn;
  for (const [key, value] of Object.entries(node))
    if (key !== 'loc' && key !== 'globals') walk(value, visit, inner);
}

/** Calls of helpers that take a key, each checked to pass KEYS[...] in that place. */
function checkKeyParams(ast, keyParams, problems) {
  walk(ast, (node) => {
    if (node.type !== 'CallExpression' || node.base?.type !== 'Identifier') return;
    for (const { name, index } of keyParams) {
      const arg = node.arguments[index];
      if (node.base.name === name && (arg === undefined || !isKeysIndex(arg))) {
        problems.push(`line ${node.loc.start.line}: ${name} is given a key not taken from KEYS`);
      }
    }
  });
}

const isKeysIndex = (node) =>
  node.type === 'IndexExpression' && node.base.type === 'Identifier' && node.base.name === 'KEYS';

/** A local function's parameter used as a key: every call must pass KEYS[...] there. */
function keyParamOf(arg, fn) {
  if (arg.type !== 'Identifier' || fn === undefined) return undefined;
  const index = fn.parameters.findIndex((param) => param.name === arg.name);
  return index < 0 || fn.identifier?.type !== 'Identifier'
    ? undefined
    : { name: fn.identifier.name, index };
}

function checkCall(node, problems, fn, keyParams) {
  const callee = node.base;
  if (callee?.type !== 'MemberExpression' || callee.base?.name !== 'redis') return;
  const [command, ...args] = node.arguments;
  if (command?.type !== 'StringLiteral') {
    problems.push(`line ${node.loc.start.line}: redis.call needs a literal command name`);
    return;
  }
  const name = command.raw.slice(1, -1).toUpperCase();
  const keyArgs = ALL_KEYS.has(name) ? args : FIRST_KEY.has(name) ? args.slice(0, 1) : [];
  if (!ALL_KEYS.has(name) && !FIRST_KEY.has(name) && !NO_KEYS.has(name)) {
    problems.push(`line ${node.loc.start.line}: ${name} is not known to this lint; add it`);
  }
  for (const arg of keyArgs) {
    const param = keyParamOf(arg, fn);
    if (param !== undefined) keyParams.push(param);
    else if (!isKeysIndex(arg)) {
      problems.push(`line ${arg.loc.start.line}: ${name} on a key not taken from KEYS`);
    }
  }
}

function lint(file, prelude) {
  const source = `${prelude}\n${readFileSync(file, 'utf8')}`;
  const offset = prelude.split('\n').length;
  const problems = [];
  let ast;
  try {
    ast = luaparse.parse(source, { scope: true, locations: true, luaVersion: '5.1' });
  } catch (error) {
    return [`${error.message} (line numbers count the prelude's ${offset} lines)`];
  }
  const keyParams = [];
  walk(ast, (node, fn) => {
    if (node.type === 'Identifier' && node.isLocal === false && !GLOBALS.has(node.name)) {
      problems.push(`line ${node.loc.start.line}: global '${node.name}'`);
    }
    if (node.type === 'CallExpression') checkCall(node, problems, fn, keyParams);
  });
  checkKeyParams(ast, keyParams, problems);
  return problems.map((problem) =>
    problem.replace(/^line (\d+)/, (_, n) => `line ${Number(n) > offset ? Number(n) - offset : n}`),
  );
}

let failed = 0;
const files = luaFiles('src');
for (const file of files) {
  const prelude = readFileSync(join(file, '..', 'prelude.lua'), 'utf8');
  for (const problem of lint(file, prelude)) {
    failed += 1;
    console.error(`${file}: ${problem}`);
  }
}
if (failed > 0) process.exit(1);
console.log(`lint-lua: ${files.length} scripts clean`);
