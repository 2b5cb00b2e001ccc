import assert from 'node:assert/strict';
import { execSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

/** What may follow the clean: compiling, and copying the Redis store's .lua files next to it. */
const COMPILE_STEPS = ['tsc ', 'node scripts/copy-assets.mjs '];

describe('npm run pretest', () => {
  it('removes .build and dist before compiling, so a deleted file cannot keep running or ship', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
      scripts: Record<string, string>;
    };
    const steps = pkg.scripts['pretest']?.split('&&').map((step) => step.trim()) ?? [];
    const clean = steps[0] ?? '';
    assert.ok(
      steps.slice(1).every((step) => COMPILE_STEPS.some((prefix) => step.startsWith(prefix))),
      `only compiles (and copies the .lua assets) after cleaning: ${steps.join(' && ')}`,
    );
    // Runs the real first step in a scratch folder holding a stale compiled test.
    const dir = mkdtempSync(join(tmpdir(), 'taskrail-clean-'));
    try {
      mkdirSync(join(dir, '.build/test'), { recursive: true });
      writeFileSync(join(dir, '.build/test/deleted.test.js'), '');
      mkdirSync(join(dir, 'dist/server'), { recursive: true });
      writeFileSync(join(dir, 'dist/server/deleted.js'), '');
      execSync(clean, { cwd: dir, stdio: 'pipe' });
      assert.equal(existsSync(join(dir, '.build')), false, `'${clean}' left .build`);
      assert.equal(existsSync(join(dir, 'dist')), false, `'${clean}' left dist`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('npm pack', () => {
  it('ships the CLI and no test fixtures (the conformance tools and client stay in the clone)', () => {
    const out = execSync('npm pack --dry-run --json --ignore-scripts', {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const [pack] = JSON.parse(out) as { files: { path: string }[] }[];
    const files = pack?.files.map((file) => file.path) ?? [];
    assert.ok(files.includes('dist/cli/main.js'), 'the CLI is packed');
    assert.ok(files.includes('dist/server/tools/demo.js'), 'the demo tools are packed');
    const fixtures = files.filter((file) => /conformance/i.test(file));
    assert.deepEqual(fixtures, [], 'conformance fixtures in the package');
  });
});
