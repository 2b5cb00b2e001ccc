import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { missingPeersError } from '../../src/task/peer-dependency.js';

describe('missingPeersError', () => {
  const postgres = { packages: ['pg', 'graphile-worker'], feature: 'a postgres:// store' };
  const metrics = { packages: ['prom-client'], feature: '/metrics (--admin)' };

  it('names every missing package of every option in one install command', () => {
    const error = missingPeersError([postgres, undefined, metrics], () => false);
    assert.equal(error?.code, 'CONFIG');
    assert.match(error?.message ?? '', /pg \(for a postgres:\/\/ store\)/);
    assert.match(error?.message ?? '', /npm install pg graphile-worker prom-client$/);
  });

  it('names only what is missing, and nothing when all is there', () => {
    const some = missingPeersError([postgres, metrics], (name) => name === 'pg');
    assert.match(some?.message ?? '', /npm install graphile-worker prom-client$/);
    assert.equal(
      missingPeersError([postgres, metrics], () => true),
      undefined,
    );
  });

  it('finds a package that is installed (resolved from the package itself)', () => {
    assert.equal(missingPeersError([{ packages: ['commander'], feature: 'the CLI' }]), undefined);
    const absent = missingPeersError([{ packages: ['no-such-package-xyz'], feature: 'x' }]);
    assert.match(absent?.message ?? '', /npm install no-such-package-xyz$/);
  });
});
