import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const SCRIPT = join(ROOT, 'scripts/check-docs.mjs');

function check(root: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [SCRIPT, root], { encoding: 'utf8' });
  return { status: run.status, output: run.stdout + run.stderr };
}

describe('scripts/check-docs.mjs (run by .ci/run)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-docs-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  function project(readme: string): string {
    const root = mkdtempSync(join(dir, 'project-'));
    mkdirSync(join(root, 'docs'));
    writeFileSync(
      join(root, 'docs/guide.md'),
      '# Guide\n\n## Run it: `taskrail serve` (fast)\n\n## Setup\n\n## Setup\n\n```md\n## Not a heading\n```\n',
    );
    writeFileSync(join(root, 'README.md'), readme);
    return root;
  }

  it('passes links and anchors that resolve, by GitHub’s heading slugs', () => {
    const root = project(
      '# Tool\n\nSee [the guide](docs/guide.md), [running](docs/guide.md#run-it-taskrail-serve-fast),\n' +
        '[setup again](docs/guide.md#setup-1), [here](#tool), [web](https://example.com/x#y).\n' +
        '`[not a link](nowhere.md)`\n',
    );
    const { status, output } = check(root);
    assert.equal(status, 0, output);
  });

  it('fails on a dead link and on a dead anchor, naming each', () => {
    const root = project(
      '# Tool\n\n[gone](docs/wire-generations.md) and [no such part](docs/guide.md#not-a-heading)\n',
    );
    const { status, output } = check(root);
    assert.equal(status, 1);
    assert.match(output, /README\.md: docs\/wire-generations\.md: no such file/);
    assert.match(output, /README\.md: docs\/guide\.md#not-a-heading: no heading '#not-a-heading'/);
  });

  it('finds nothing dead in this repository’s README.md and docs/', () => {
    const { status, output } = check(ROOT);
    assert.equal(status, 0, output);
  });
});
