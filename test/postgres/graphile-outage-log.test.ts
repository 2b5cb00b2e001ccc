import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OutageLog } from '../../src/executors/graphile-worker/outage-log.js';

/** Pure logic: which of graphile-worker's failures reach the log during an outage. */
describe('graphile-worker outage log', () => {
  function logged(): { log: OutageLog; lines: string[] } {
    const lines: string[] = [];
    return { log: new OutageLog((message) => lines.push(message)), lines };
  }

  it('logs a connection failure once per outage, again after the pool connects', () => {
    const { log, lines } = logged();
    const lost = new Error('Connection terminated unexpectedly');
    log.warn('Failed to complete jobs 1', 'text', { fatalError: lost });
    log.warn('Failed to complete jobs 2', 'text', { fatalError: lost });
    log.warn('connection lost', new Error('timeout exceeded when trying to connect'));
    assert.deepEqual(lines, ['Failed to complete jobs 1']);
    log.connected();
    log.warn('Failed to complete jobs 3', `Failed: ${lost.message}`);
    assert.deepEqual(lines, ['Failed to complete jobs 1', 'Failed to complete jobs 3']);
  });

  it('always logs a failure that is not about the connection', () => {
    const { log, lines } = logged();
    log.warn('lost', new Error('Connection terminated unexpectedly'));
    log.warn('bug', 'Error occurred in event emitter', { error: new Error('oops') });
    log.warn('bug', 'Error occurred in event emitter', { error: new Error('oops') });
    assert.deepEqual(lines, ['lost', 'bug', 'bug']);
  });
});
