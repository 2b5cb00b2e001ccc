import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  afterFailure,
  assertRunPolicy,
  retryStatusMessage,
  runPolicyOf,
} from '../../src/runtime/run-policy.js';
import type { RetryOptions, TaskSettings } from '../../src/runtime/tool.js';

const settings = (extra: Partial<TaskSettings>): TaskSettings => ({ mode: 'optional', ...extra });

describe('run policy model', () => {
  it('resolves the defaults of the interface', () => {
    assert.deepEqual(runPolicyOf(settings({})), {
      timeoutMs: undefined,
      retry: {
        maxAttempts: 3,
        onError: false,
        backoffMs: 1000,
        backoffFactor: 2,
        maxBackoffMs: 60_000,
      },
    });
    assert.deepEqual(runPolicyOf(settings({ retry: false, timeoutMs: 5 })), {
      timeoutMs: 5,
      retry: false,
    });
    const custom = runPolicyOf(settings({ retry: { onError: true, maxAttempts: 5 } }));
    assert.equal(custom.retry !== false && custom.retry.maxAttempts, 5);
  });

  it('backs off backoffMs × backoffFactor^(attempt−1) in whole ms, capped by maxBackoffMs', () => {
    const policy = (retry: Partial<RetryOptions>) =>
      runPolicyOf(settings({ retry: { onError: true, maxAttempts: 10, ...retry } }));
    const delays = (retry: Partial<RetryOptions>) =>
      [1, 2, 3, 4, 5].map((attempt) => {
        const next = afterFailure(policy(retry), attempt, 'threw');
        return next.retry ? next.delayMs : undefined;
      });
    assert.deepEqual(
      delays({ backoffMs: 1000, maxBackoffMs: 5000 }),
      [1000, 2000, 4000, 5000, 5000],
    );
    // 1000 × 1.3³ is 2196.9999999999995 in floating point.
    assert.deepEqual(
      delays({ backoffMs: 1000, backoffFactor: 1.3 }),
      [1000, 1300, 1690, 2197, 2856],
    );
    assert.deepEqual(delays({ backoffMs: 0 }), [0, 0, 0, 0, 0]);
    const long = runPolicyOf(
      settings({ retry: { onError: true, maxAttempts: 5000, backoffMs: 0 } }),
    );
    assert.deepEqual(afterFailure(long, 4000, 'threw'), {
      retry: true,
      delayMs: 0,
      nextAttempt: 4001,
    });
  });

  it('decides what follows a failed attempt', () => {
    const onError = runPolicyOf(settings({ retry: { onError: true, maxAttempts: 3 } }));
    assert.deepEqual(afterFailure(onError, 1, 'threw'), {
      retry: true,
      delayMs: 1000,
      nextAttempt: 2,
    });
    assert.deepEqual(afterFailure(onError, 2, 'timed-out'), {
      retry: true,
      delayMs: 2000,
      nextAttempt: 3,
    });
    assert.deepEqual(afterFailure(onError, 3, 'threw'), { retry: false }, 'attempts used up');
    assert.deepEqual(afterFailure(onError, 1, 'final'), { retry: false }, 'RpcError is final');
    assert.deepEqual(afterFailure(runPolicyOf(settings({})), 1, 'threw'), { retry: false });
    assert.deepEqual(afterFailure(runPolicyOf(settings({ retry: false })), 1, 'timed-out'), {
      retry: false,
    });
  });

  it('says which attempt comes when and why', () => {
    const at = Date.UTC(2026, 11, 2, 12, 3, 4);
    assert.equal(
      retryStatusMessage(2, 3, at, 'upstream 503'),
      'attempt 2 of 3 at 12:03:04Z after: upstream 503',
    );
  });

  it('refuses every wrong field at registration, saying what to write', () => {
    const cases: [Partial<TaskSettings>, RegExp][] = [
      [{ timeoutMs: 0 }, /timeoutMs must be a positive integer/],
      [{ timeoutMs: 1.5 }, /timeoutMs must be a positive integer/],
      [{ timeoutMs: '5s' as unknown as number }, /timeoutMs must be a positive integer.*"5s"/],
      [{ retry: { maxAttempts: 0 } }, /retry.maxAttempts must be a positive integer/],
      [{ retry: { onError: 'yes' as unknown as boolean } }, /retry.onError must be true or false/],
      [{ retry: { backoffMs: -1 } }, /retry.backoffMs must be an integer from 0 to \d+ \(10 years/],
      [{ retry: { maxBackoffMs: 4e11 } }, /retry.maxBackoffMs must be an integer from 0 to \d+/],
      [{ retry: { backoffFactor: 0.5 } }, /retry.backoffFactor must be a number ≥ 1/],
      [{ retry: { maxBackoffMs: 10, backoffMs: 100 } }, /raise maxBackoffMs or lower backoffMs/],
      [{ retry: { attempts: 3 } as never }, /retry.attempts is not an option; use maxAttempts/],
      [{ retry: 'always' as never }, /retry must be true, false or/],
    ];
    for (const [extra, message] of cases) {
      assert.throws(() => assertRunPolicy('api_client', settings(extra)), message);
      assert.throws(
        () => assertRunPolicy('api_client', settings(extra)),
        /tool 'api_client': task\./,
      );
    }
    assertRunPolicy('ok', settings({ timeoutMs: 30_000, retry: { onError: true } }));
    assertRunPolicy('ok', settings({ retry: true }));
  });
});
