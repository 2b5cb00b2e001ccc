#!/usr/bin/env node
// Fails on a dead relative link or anchor in README.md and docs/*.md: every `[text](path)`,
// `[text](path#anchor)`, `[text](#anchor)` and `[name]: path` must name a file that exists and,
// with an anchor, a heading of that file (GitHub's heading slugs) or an explicit id/name.
// Usage: node scripts/check-docs.mjs [ROOT]   (ROOT defaults to the repository)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Markdown text without fenced code blocks and inline code, where links are not links. */
function withoutCode(text) {
  return text
    .replace(/^([ \t]*)(```|~~~)[^\n]*\n[\s\S]*?^\1\2[^\n]*$/gm, '')
    .replace(/(`+)[\s\S]*?\1/g, '');
}

/** GitHub's anchor for a heading's text (before de-duplication). */
export function slug(heading) {
  return heading
    .replace(/<[^>]*>/g, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown file offers: heading slugs (with -1, -2… for repeats) and ids. */
export function anchorsOf(text) {
  const anchors = new Set();
  const seen = new Map();
  const body = text.replace(/^([ \t]*)(```|~~~)[^\n]*\n[\s\S]*?^\1\2[^\n]*$/gm, '');
  for (const match of body.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = slug(match[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const match of body.matchAll(/<[^>]+\s(?:id|name)="([^"]+)"/g)) anchors.add(match[1]);
  return anchors;
}

/** The relative link targets of a Markdown text. */
export function linksOf(text) {
  const plain = withoutCode(text);
  const targets = [];
  for (const match of plain.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    targets.push(match[1]);
  }
  for (const match of plain.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)) {
    targets.push(match[1]);
  }
  return targets.filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** Problems found in `files` (absolute paths), each `file: target: what is wrong`. */
export function checkFiles(root, files) {
  const problems = [];
  const anchorCache = new Map();
  const anchorsIn = (path) => {
    if (!anchorCache.has(path)) anchorCache.set(path, anchorsOf(readFileSync(path, 'utf8')));
    return anchorCache.get(path);
  };
  for (const file of files) {
    for (const target of linksOf(readFileSync(file, 'utf8'))) {
      const [pathPart, anchor] = splitAnchor(target);
      const linked = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart));
      const where = `${relative(root, file)}: ${target}`;
      if (!existsSync(linked)) {
        problems.push(`${where}: no such file ${relative(root, linked)}`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (statSync(linked).isDirectory() || !linked.endsWith('.md')) continue;
      if (!anchorsIn(linked).has(decodeURIComponent(anchor).toLowerCase())) {
        problems.push(`${where}: no heading '#${anchor}' in ${relative(root, linked)}`);
      }
    }
  }
  return problems;
}

function splitAnchor(target) {
  const hash = target.indexOf('#');
  return hash < 0 ? [target, undefined] : [target.slice(0, hash), target.slice(hash + 1)];
}

/** README.md and docs/*.md under `root`. */
export function docFiles(root) {
  const files = [join(root, 'README.md')].filter((path) => existsSync(path));
  const docs = join(root, 'docs');
  if (existsSync(docs)) {
    for (const name of readdirSync(docs).sort()) {
      if (name.endsWith('.md')) files.push(join(docs, name));
    }
  }
  return files;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
  const files = docFiles(root);
  const problems = checkFiles(root, files);
  for (const problem of problems) console.error(`dead link: ${problem}`);
  if (problems.length > 0) {
    console.error(`check-docs: ${problems.length} dead link(s) in ${files.length} file(s)`);
    process.exit(1);
  }
  console.log(`check-docs: every relative link and anchor in ${files.length} file(s) resolves`);
}
