import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '../../src/testing/index.js';

describe('waitFor (taskrail/testing)', () => {
  it('keeps waiting through every falsy value and resolves with the first truthy one', async () => {
    const values: unknown[] = [undefined, null, false, 0, '', 0n, 'done'];
    let calls = 0;
    const value = await waitFor('a truthy value', () => values[calls++] as string | undefined);
    assert.equal(value, 'done');
    assert.equal(calls, values.length);
  });

  it('fails at the deadline naming what it waited for and the last error', async () => {
    await assert.rejects(
      waitFor(
        'zero to become truthy',
        () => {
          throw new Error('probe broke');
        },
        { timeoutMs: 30 },
      ),
      /timed out after 30 ms waiting for zero to become truthy \(last error: Error: probe broke\)/,
    );
    await assert.rejects(
      waitFor('never', () => 0, { timeoutMs: 30 }),
      /waiting for never/,
    );
  });
});
