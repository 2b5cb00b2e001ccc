import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backoffDelayMs } from '../../src/task/backoff.js';

describe('backoffDelayMs', () => {
  it('grows by the factor from backoffMs, first retry first', () => {
    const backoff = { backoffMs: 1000, backoffFactor: 3, maxBackoffMs: 1_000_000 };
    assert.deepEqual(
      [1, 2, 3, 4].map((retry) => backoffDelayMs(backoff, retry)),
      [1000, 3000, 9000, 27000],
    );
  });

  it('doubles when no factor is given', () => {
    const backoff = { backoffMs: 25, maxBackoffMs: 10_000 };
    assert.deepEqual(
      [1, 2, 3].map((retry) => backoffDelayMs(backoff, retry)),
      [25, 50, 100],
    );
  });

  it('never exceeds maxBackoffMs, however many retries', () => {
    const backoff = { backoffMs: 100, maxBackoffMs: 2000 };
    assert.equal(backoffDelayMs(backoff, 5), 1600);
    assert.equal(backoffDelayMs(backoff, 6), 2000);
    assert.equal(backoffDelayMs(backoff, 10_000), 2000);
  });

  it('treats a retry below 1 as the first', () => {
    const backoff = { backoffMs: 100, maxBackoffMs: 2000 };
    assert.equal(backoffDelayMs(backoff, 0), 100);
    assert.equal(backoffDelayMs(backoff, -3), 100);
  });

  it('jitters the capped delay into [½·delay, delay)', () => {
    const backoff = { backoffMs: 100, maxBackoffMs: 300, jitter: true };
    assert.equal(
      backoffDelayMs(backoff, 1, () => 0),
      50,
    );
    assert.equal(
      backoffDelayMs(backoff, 9, () => 0.5),
      225,
    );
    for (let i = 0; i < 100; i += 1) {
      const delay = backoffDelayMs(backoff, 3);
      assert.ok(delay >= 150 && delay < 300, `${delay} outside [150, 300)`);
    }
  });

  it('gives whole ms: rounded, and a jittered delay rounded down below the delay', () => {
    assert.equal(
      backoffDelayMs({ backoffMs: 1000, backoffFactor: 1.3, maxBackoffMs: 1e6 }, 4),
      2197,
    );
    assert.equal(backoffDelayMs({ backoffMs: 10, backoffFactor: 1.05, maxBackoffMs: 1e6 }, 2), 11);
    const jittered = { backoffMs: 7, maxBackoffMs: 1000, jitter: true };
    assert.equal(
      backoffDelayMs(jittered, 1, () => 0.999),
      6,
    );
  });

  it('keeps a zero first delay zero, however many retries', () => {
    assert.equal(backoffDelayMs({ backoffMs: 0, maxBackoffMs: 1000 }, 5000), 0);
    assert.equal(backoffDelayMs({ backoffMs: 0, maxBackoffMs: 1000, jitter: true }, 5000), 0);
  });

  it('counts a fractional retry by its whole part; a factor of 1 keeps the delay flat', () => {
    const backoff = { backoffMs: 100, maxBackoffMs: 10_000 };
    assert.equal(backoffDelayMs(backoff, 2.9), 200);
    const flat = { backoffMs: 250, backoffFactor: 1, maxBackoffMs: 10_000 };
    assert.deepEqual(
      [1, 5, 50].map((retry) => backoffDelayMs(flat, retry)),
      [250, 250, 250],
    );
  });

  it('does not jitter unless asked', () => {
    assert.equal(
      backoffDelayMs({ backoffMs: 100, maxBackoffMs: 300 }, 2, () => 0),
      200,
    );
  });
});
