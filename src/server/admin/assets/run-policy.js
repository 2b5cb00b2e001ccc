/*
 * The run-policy parts of a dashboard row: attempts ("2 of 3") and the durable wait a working
 * task is in (a line under its status badge) (a retry's backoff, ctx.sleep, a concurrency permit), from the `maxAttempts` and
 * `waiting` fields of the API's summaries (stored fields, not the status message). Loaded before
 * dashboard.js, which calls it with the page's `el`.
 */
'use strict';

// eslint-disable-next-line @typescript-eslint/no-unused-vars -- called by dashboard.js
function taskrailRunPolicy(el) {
  var LABELS = { backoff: 'retry', sleep: 'sleeping', permit: 'waiting for a permit' };

  function attempts(task) {
    return task.maxAttempts ? task.attempt + ' of ' + task.maxAttempts : String(task.attempt);
  }

  /** `12:03:04Z` as in the status messages (UTC), `12-05 12:03:04Z` on another day. */
  function clock(iso) {
    var time = iso.slice(11, 19) + 'Z';
    return iso.slice(0, 10) === new Date().toISOString().slice(0, 10)
      ? time
      : iso.slice(5, 10) + ' ' + time;
  }

  function due(wait) {
    return wait.until !== undefined && Date.parse(wait.until) <= Date.now();
  }

  function waitText(wait) {
    var label = LABELS[wait.kind] || wait.kind;
    if (wait.until === undefined) return label;
    return label + (due(wait) ? ' · due' : ' until ' + clock(wait.until));
  }

  function waitTitle(wait) {
    if (wait.kind === 'permit') return 'over its concurrency limit: starts when a permit frees';
    var what = wait.kind === 'backoff' ? 'the next attempt' : 'the sleep ends';
    return what + ' at ' + wait.until + (due(wait) ? ' (due: any worker may claim it)' : '');
  }

  /** A line under the status badge, or nothing for a task that is not waiting. */
  function waitNote(task) {
    var wait = task.waiting;
    if (!wait) return null;
    return el('span', {
      class: 'wait ' + wait.kind,
      'data-wait': wait.kind,
      title: waitTitle(wait),
      text: waitText(wait),
    });
  }

  /** The detail pane's line: "attempt 2 of 3 · retry until 12:03:04Z". */
  function facts(task) {
    var line = 'attempt ' + attempts(task);
    return task.waiting ? line + ' · ' + waitText(task.waiting) : line;
  }

  return { attempts: attempts, waitNote: waitNote, facts: facts };
}
