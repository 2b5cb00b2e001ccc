/*
 * The part of the dashboard script that shows a task's output (`ctx.output`) in the detail
 * pane, growing while the task runs (read from `tasks/ID/output?offset=N`, once a second), and
 * offers its whole result as a download (fetched with the admin token, saved from a blob URL:
 * a plain link could not send the Authorization header). Loaded before dashboard.js, which
 * calls it with what it shares of the page (`el`, `api`).
 */
'use strict';

// eslint-disable-next-line @typescript-eslint/no-unused-vars -- called by dashboard.js
function taskrailOutputView(page) {
  var el = page.el;
  var POLL_MS = 1000;
  var LIVE = ['working', 'input_required'];
  var current = null;

  function stop() {
    if (current) current.stopped = true;
    current = null;
  }

  async function readMore(view) {
    for (;;) {
      var res = await page.api(
        'tasks/' + encodeURIComponent(view.id) + '/output?offset=' + view.offset,
      );
      if (!res.ok || view.stopped) return;
      var body = await res.json();
      if (view.stopped) return;
      if (body.dropped > view.offset) {
        view.pre.textContent = '… ' + body.dropped + ' characters dropped …\n';
      }
      if (body.text) view.pre.textContent += body.text;
      view.offset = body.start + body.text.length;
      view.section.hidden = view.pre.textContent === '';
      if (view.offset >= body.end) return;
    }
  }

  async function follow(view) {
    while (!view.stopped) {
      var live = view.live();
      await readMore(view).catch(function () {});
      if (!live) return;
      await new Promise(function (resolve) {
        setTimeout(resolve, POLL_MS);
      });
    }
  }

  /** The Output section of a task's detail, following it while `isLive()` says it runs. */
  function section(task, isLive) {
    // The pane is redrawn on every update of the task: the section it follows stays.
    if (current && current.id === task.id) return current.section;
    stop();
    var pre = el('pre', { class: 'output', id: 'task-output' });
    var view = {
      id: task.id,
      offset: 0,
      stopped: false,
      pre: pre,
      live: isLive,
      section: el('div', { class: 'output-section' }, [el('h3', { text: 'Output' }), pre]),
    };
    view.section.hidden = true;
    current = view;
    follow(view);
    return view.section;
  }

  async function download(id, kind) {
    var res = await page.api('tasks/' + encodeURIComponent(id) + '/' + kind);
    if (!res.ok) {
      window.alert('No ' + kind + ' to download (HTTP ' + res.status + ')');
      return;
    }
    var url = window.URL.createObjectURL(await res.blob());
    var link = el('a', {
      href: url,
      download: 'task-' + id + '-' + kind + (kind === 'structured' ? '.json' : '.txt'),
    });
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(function () {
      window.URL.revokeObjectURL(url);
    }, 60000);
  }

  function button(id, label, taskId, kind) {
    return el('button', {
      type: 'button',
      id: id,
      class: 'download',
      text: label,
      on: {
        click: function () {
          download(taskId, kind);
        },
      },
    });
  }

  /**
   * A "Download whole result" button for a task that has a result, and one for its
   * structuredContent when that was moved out of the result for its size.
   */
  function downloadButton(task) {
    if (task.result === undefined) return null;
    var whole = button('download-result', 'Download whole result', task.id, 'result');
    var meta = task.result._meta || {};
    if (meta['taskrail/structured-kept-apart'] === undefined) return whole;
    var structured = button(
      'download-structured',
      'Download whole structuredContent (JSON)',
      task.id,
      'structured',
    );
    return el('span', { class: 'downloads' }, [whole, structured]);
  }

  return { section: section, downloadButton: downloadButton, stop: stop, LIVE: LIVE };
}
