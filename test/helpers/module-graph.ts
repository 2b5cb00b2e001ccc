import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The module graph of `src/`, read with the TypeScript parser rather than by regex: static
 * imports and re-exports, `import type`, `typeof import('…')`, dynamic `import()` (a literal,
 * or a `const` in the same file holding one) and `createRequire(…)(…)`. Relative specifiers are
 * resolved to the files they load.
 */
export interface Edge {
  /** Path of the importing file, relative to `src/` (`server/app.ts`). */
  from: string;
  /** A file relative to `src/`, or a package name (`ioredis`, `@modelcontextprotocol/server`). */
  to: string;
  kind: 'file' | 'package' | 'builtin';
  /** Erased at compile time: names types only, loads nothing. */
  typeOnly: boolean;
  /** Loaded on first use (`import()`, `createRequire`), not when the importer loads. */
  lazy: boolean;
  specifier: string;
}

export interface ModuleGraph {
  files: string[];
  edges: Edge[];
  /** Loads whose target the parser cannot know (a computed specifier), as `file: text`. */
  unresolved: string[];
}

export function sourceFiles(root: string, dir = root, source = /\.ts$/): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules') return [];
    if (statSync(path).isDirectory()) return sourceFiles(root, path, source);
    return source.test(name) ? [relative(root, path)] : [];
  });
}

/** Every module the repository's own code is written in: TypeScript, and scripts' `.mjs`. */
const REPOSITORY_SOURCE = /\.(ts|mts|mjs)$/;

/**
 * The module graph of `folders` of the repository at `root` together (paths relative to
 * `root`), so a cycle that runs through two folders (test/ → chaos/ → test/) shows too.
 */
export function readRepositoryGraph(root: string, folders: readonly string[]): ModuleGraph {
  const files = folders
    .filter((folder) => existsSync(join(root, folder)))
    .flatMap((folder) => sourceFiles(root, join(root, folder), REPOSITORY_SOURCE))
    .filter((file) => !file.endsWith('.d.ts'))
    .sort();
  const graph: ModuleGraph = { files, edges: [], unresolved: [] };
  for (const file of files) collectFile(root, file, graph);
  return graph;
}

export function readModuleGraph(root: string): ModuleGraph {
  const files = sourceFiles(root).sort();
  const graph: ModuleGraph = { files, edges: [], unresolved: [] };
  for (const file of files) collectFile(root, file, graph);
  return graph;
}

interface Found {
  specifier: string;
  typeOnly: boolean;
  lazy: boolean;
}

function collectFile(root: string, file: string, graph: ModuleGraph): void {
  const text = readFileSync(join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Found[] = [];
  const visit = (node: ts.Node): void => {
    const hit = loadOf(node);
    if (hit === 'unknown') graph.unresolved.push(`${file}: ${node.getText(source)}`);
    else if (hit !== undefined) found.push(hit);
    ts.forEachChild(node, visit);
  };
  visit(source);
  for (const hit of found) graph.edges.push(edgeOf(root, file, hit, graph));
}

/** The string a `const` holds, from the nearest enclosing block that declares the name. */
function constantValue(name: ts.Identifier): string | undefined {
  for (let scope: ts.Node | undefined = name.parent; scope !== undefined; scope = scope.parent) {
    if (!ts.isBlock(scope) && !ts.isSourceFile(scope)) continue;
    for (const statement of scope.statements) {
      if (!ts.isVariableStatement(statement)) continue;
      if ((statement.declarationList.flags & ts.NodeFlags.Const) === 0) continue;
      for (const declaration of statement.declarationList.declarations) {
        const init = declaration.initializer;
        if (!ts.isIdentifier(declaration.name) || declaration.name.text !== name.text) continue;
        return init !== undefined && ts.isStringLiteralLike(init) ? init.text : undefined;
      }
    }
  }
  return undefined;
}

function loadOf(node: ts.Node): Found | 'unknown' | undefined {
  if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
    const typeOnly = node.importClause?.isTypeOnly === true;
    return { specifier: node.moduleSpecifier.text, typeOnly, lazy: false };
  }
  if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined) {
    const specifier = (node.moduleSpecifier as ts.StringLiteral).text;
    return { specifier, typeOnly: node.isTypeOnly, lazy: false };
  }
  if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
    const literal = node.argument.literal;
    if (ts.isStringLiteral(literal)) return { specifier: literal.text, typeOnly: true, lazy: true };
  }
  if (ts.isCallExpression(node) && isLoader(node.expression)) {
    const argument = node.arguments[0];
    if (argument !== undefined && ts.isStringLiteralLike(argument)) {
      return { specifier: argument.text, typeOnly: false, lazy: true };
    }
    const value =
      argument !== undefined && ts.isIdentifier(argument) ? constantValue(argument) : undefined;
    return value === undefined ? 'unknown' : { specifier: value, typeOnly: false, lazy: true };
  }
  return undefined;
}

/** `import(x)`, and the function `createRequire(…)` returns, called at once or later. */
function isLoader(callee: ts.Expression): boolean {
  if (callee.kind === ts.SyntaxKind.ImportKeyword) return true;
  if (!ts.isCallExpression(callee)) return false;
  return ts.isIdentifier(callee.expression) && callee.expression.text === 'createRequire';
}

function edgeOf(root: string, file: string, hit: Found, graph: ModuleGraph): Edge {
  const base = { from: file, typeOnly: hit.typeOnly, lazy: hit.lazy, specifier: hit.specifier };
  if (hit.specifier.startsWith('.')) {
    const loaded = resolve(dirname(join(root, file)), hit.specifier);
    // A `.js` specifier names the `.ts` file it is compiled from, where there is one.
    const compiledFrom = loaded.replace(/\.js$/, '.ts');
    const target = existsSync(compiledFrom) ? compiledFrom : loaded;
    if (!existsSync(target)) graph.unresolved.push(`${file}: ${hit.specifier} (no such file)`);
    return { ...base, to: relative(root, target), kind: 'file' };
  }
  if (hit.specifier.startsWith('node:') || builtinModules.includes(hit.specifier)) {
    return { ...base, to: hit.specifier.replace(/^node:/, ''), kind: 'builtin' };
  }
  return { ...base, to: packageName(hit.specifier), kind: 'package' };
}

/** `ajv/dist/2020.js` → `ajv`; `@scope/name/sub` → `@scope/name`. */
export function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

/** The folder a file belongs to (`server/admin`, or `.` for files directly under `src/`). */
export function folderOf(file: string): string {
  const folder = dirname(file);
  return folder === '' ? '.' : folder;
}

/**
 * Strongly connected groups of more than one node (Tarjan): the cycles of a directed graph.
 * Each group is sorted; groups are sorted by their first node.
 */
export function cyclesOf(
  nodes: Iterable<string>,
  next: (node: string) => Iterable<string>,
): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const to of next(node)) {
      if (!index.has(to)) {
        connect(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1) groups.push(group.sort());
  };
  for (const node of nodes) if (!index.has(node)) connect(node);
  return groups.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}
