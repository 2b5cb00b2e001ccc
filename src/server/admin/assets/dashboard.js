/*
 * The dashboard's browser script: plain ES2020, no build step, no CDN. It reads the live feed
 * with `fetch` streaming rather than `EventSource`, because EventSource cannot send the
 * Authorization header and a token in the URL would end up in access logs and history.
 * Everything from a task is put on the page with `textContent`, never as HTML.
 */
/* global taskrailAnswerForm, taskrailRunPolicy, taskrailOutputView -- defined by answer-form.js, run-policy.js and output-view.js, loaded first */
'use strict';
(function () {
  var KEY = 'taskrail.adminToken';
  var LIVE = ['working', 'input_required'];
  var state = {
    tasks: new Map(),
    selected: null,
    operator: null,
    stream: null,
    tools: new Set(),
    principals: new Set(),
    /** The newest list request; an older one's answer arrives late and is dropped. */
    listing: 0,
    /** Live changes since the newest list request was sent (null: deleted), laid over its answer. */
    sinceListing: new Map(),
  };
  var $ = function (id) {
    return document.getElementById(id);
  };

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === 'text') node.textContent = attrs[k];
      else if (k === 'on')
        Object.keys(attrs.on).forEach(function (e) {
          node.addEventListener(e, attrs.on[e]);
        });
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) {
      if (c) node.appendChild(c);
    });
    return node;
  }

  var policy = taskrailRunPolicy(el);
  var form = taskrailAnswerForm({
    el: el,
    api: api,
    upsert: upsert,
    operator: function () {
      return state.operator;
    },
  });

  var output = taskrailOutputView({ el: el, api: api });

  function token() {
    return sessionStorage.getItem(KEY);
  }

  async function api(path, init) {
    init = init || {};
    var headers = Object.assign({}, init.headers || {}, { authorization: 'Bearer ' + token() });
    var res = await fetch('/dashboard/api/' + path, Object.assign({}, init, { headers: headers }));
    if (res.status === 401) {
      logout('That is not an admin token (HTTP 401).');
      throw new Error('unauthorized');
    }
    return res;
  }

  function logout(message) {
    sessionStorage.removeItem(KEY);
    if (state.stream) state.stream.abort();
    state.stream = null;
    $('app').hidden = true;
    $('logout').hidden = true;
    $('login').hidden = false;
    $('who').textContent = '';
    $('login-error').textContent = message || '';
    setLive(false);
  }

  async function login(event) {
    event.preventDefault();
    sessionStorage.setItem(KEY, $('token').value.trim());
    $('token').value = '';
    await start();
  }

  async function start() {
    if (!token()) return logout('');
    var res;
    try {
      res = await api('me');
    } catch (e) {
      return;
    }
    if (!res.ok) return logout('The server refused: HTTP ' + res.status);
    state.operator = await res.json();
    $('login').hidden = true;
    $('app').hidden = false;
    $('logout').hidden = false;
    $('who').textContent =
      state.operator.name +
      (state.operator.canAnswer
        ? ' · may answer input'
        : state.operator.canCancel
          ? ''
          : ' · read only');
    await loadList();
    connect();
  }

  function filters() {
    return {
      status: $('f-status').value,
      waiting: $('f-waiting').value,
      tool: $('f-tool').value.trim(),
      principal: $('f-principal').value.trim(),
    };
  }

  function matches(task) {
    var f = filters();
    return (
      (!f.status || task.outcome === f.status) &&
      (!f.waiting || (task.waiting && task.waiting.kind === f.waiting)) &&
      (!f.tool || task.tool === f.tool) &&
      (!f.principal || task.principal === f.principal)
    );
  }

  async function loadList() {
    var f = filters();
    var query = new URLSearchParams({ limit: '200' });
    Object.keys(f).forEach(function (k) {
      if (f[k]) query.set(k, f[k]);
    });
    var listing = ++state.listing;
    state.sinceListing = new Map();
    var res = await api('tasks?' + query.toString());
    if (!res.ok) return;
    var body = await res.json();
    if (listing !== state.listing) return;
    var tasks = new Map();
    body.tasks.forEach(function (t) {
      remember(t);
      tasks.set(t.id, t);
    });
    state.sinceListing.forEach(function (task, id) {
      var listed = tasks.get(id);
      if (task === null) tasks.delete(id);
      else if (!listed || listed.revision <= task.revision) {
        if (matches(task)) tasks.set(id, task);
        else tasks.delete(id);
      }
    });
    state.tasks = tasks;
    render();
  }

  function remember(task) {
    [
      ['tools', task.tool],
      ['principals', task.principal],
    ].forEach(function (pair) {
      if (state[pair[0]].has(pair[1])) return;
      state[pair[0]].add(pair[1]);
      $(pair[0]).appendChild(el('option', { value: pair[1] }));
    });
  }

  function age(iso) {
    var s = Math.max(0, Math.floor((Date.now() - Date.parse(iso)) / 1000));
    if (s < 60) return s + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm ' + (s % 60) + 's';
    if (s < 86400) return Math.floor(s / 3600) + 'h ' + Math.floor((s % 3600) / 60) + 'm';
    return Math.floor(s / 86400) + 'd';
  }

  function badge(task) {
    var outcome = task.outcome || task.status;
    return el('span', {
      class: 'status ' + outcome,
      text: outcome === 'tool_error' ? 'tool error' : outcome,
      title: outcome === 'tool_error' ? 'completed with an isError result' : outcome,
    });
  }

  function pendingText(count) {
    return count === 1 ? '1 question pending' : count + ' questions pending';
  }

  function row(task) {
    var cancel =
      state.operator.canCancel && LIVE.indexOf(task.status) >= 0
        ? el('button', {
            type: 'button',
            class: 'danger cancel',
            text: 'Cancel',
            on: {
              click: function (e) {
                e.stopPropagation();
                cancelTask(task.id);
              },
            },
          })
        : null;
    var message = task.statusMessage || '';
    if (task.pendingInput > 0)
      message = [pendingText(task.pendingInput), message].filter(Boolean).join(' · ');
    return el(
      'tr',
      {
        'data-id': task.id,
        'data-status': task.status,
        'data-outcome': task.outcome,
        class: state.selected === task.id ? 'selected' : '',
        on: {
          click: function () {
            showDetail(task.id);
          },
        },
      },
      [
        el('td', { class: 'id', text: task.id.slice(0, 12) + '…', title: task.id }),
        el('td', { class: 'st' }, [badge(task), policy.waitNote(task)]),
        el('td', { class: 'tool', text: task.tool, title: task.tool }),
        el('td', { class: 'who', text: task.principal, title: task.principal }),
        el('td', { class: 'age', 'data-created': task.createdAt, text: age(task.createdAt) }),
        el('td', { class: 'msg', text: message }),
        el('td', { class: 'attempt', text: policy.attempts(task) }),
        el('td', {}, [cancel]),
      ],
    );
  }

  function render() {
    var list = Array.from(state.tasks.values()).sort(function (a, b) {
      return a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0;
    });
    var body = document.querySelector('#tasks tbody');
    body.replaceChildren.apply(body, list.map(row));
    $('count').textContent = list.length === 1 ? '1 task' : list.length + ' tasks';
  }

  function upsert(task) {
    remember(task);
    var since = state.sinceListing.get(task.id);
    if (!since || since.revision <= task.revision) state.sinceListing.set(task.id, task);
    var known = state.tasks.get(task.id);
    if (known && known.revision > task.revision) return;
    if (matches(task)) state.tasks.set(task.id, task);
    else state.tasks.delete(task.id);
    render();
    if (state.selected === task.id) showDetail(task.id);
  }

  function handleFrame(frame) {
    var event = 'message',
      data = '';
    frame.split('\n').forEach(function (line) {
      if (line.indexOf('event:') === 0) event = line.slice(6).trim();
      else if (line.indexOf('data:') === 0) data += line.slice(5).trim();
    });
    if (!data) return;
    var value = JSON.parse(data);
    if (event === 'task') upsert(value);
    else if (event === 'deleted') {
      state.sinceListing.set(value.id, null);
      state.tasks.delete(value.id);
      render();
    }
  }

  function setLive(on) {
    $('live').className = on ? 'on' : 'off';
    $('live').textContent = on ? 'live' : 'offline';
  }

  async function connect() {
    var ctrl = new AbortController();
    if (state.stream) state.stream.abort();
    state.stream = ctrl;
    try {
      var res = await api('events', {
        signal: ctrl.signal,
        headers: { accept: 'text/event-stream' },
      });
      if (!res.ok || !res.body) throw new Error('HTTP ' + res.status);
      setLive(true);
      var reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      var buffer = '';
      for (;;) {
        var chunk = await reader.read();
        if (chunk.done) break;
        buffer += chunk.value.replace(/\r\n/g, '\n');
        var frames = buffer.split('\n\n');
        buffer = frames.pop();
        frames.forEach(handleFrame);
      }
    } catch (e) {
      /* reconnect below */
    }
    if (state.stream !== ctrl) return;
    setLive(false);
    setTimeout(function () {
      if (state.stream === ctrl && token()) {
        loadList();
        connect();
      }
    }, 2000);
  }

  async function cancelTask(id) {
    if (!window.confirm('Cancel task ' + id + '?')) return;
    var res = await api('tasks/' + id + '/cancel', { method: 'POST' });
    var body = await res.json();
    if (body.task) upsert(body.task);
    if (!res.ok) window.alert('Not cancelled: ' + (body.error || res.status));
  }

  function timeline(task) {
    var items = task.timeline.map(function (e) {
      var what = e.kind === 'status' ? (e.from ? e.from + ' → ' : '') + e.status : e.kind;
      if (e.kind === 'answer') what = 'answer ' + e.key + ' by ' + e.by.role + ' ' + e.by.name;
      var said = e.kind === 'answer' ? e.answer : e.message;
      return el('li', { class: 'kind-' + e.kind }, [
        el('span', { class: 'when', text: e.at.slice(11, 23) + ' ' }),
        el('strong', { text: what }),
        el('span', { text: said ? ' — ' + said : '' }),
      ]);
    });
    var note =
      task.timelineSource === 'derived'
        ? 'Rebuilt from the record: this server has seen no event for the task.'
        : 'Recorded from store events (bounded, in memory).';
    return [
      el('h3', { text: 'Timeline' }),
      el('ol', { class: 'timeline' }, items),
      el('p', { class: 'note', text: note }),
    ];
  }

  async function showDetail(id) {
    state.selected = id;
    var res = await api('tasks/' + encodeURIComponent(id));
    var pane = $('detail');
    if (!res.ok) {
      pane.hidden = true;
      return;
    }
    var task = await res.json();
    if (state.selected !== id) return;
    var facts =
      'tool ' +
      task.tool +
      ' · principal ' +
      task.principal +
      ' · ' +
      policy.facts(task) +
      ' · wire ' +
      task.wire +
      ' · created ' +
      task.createdAt +
      (task.expiresAt ? ' · expires ' + task.expiresAt : '');
    var parts = [
      el('button', {
        type: 'button',
        class: 'close',
        title: 'Close',
        text: '×',
        on: {
          click: function () {
            state.selected = null;
            output.stop();
            pane.hidden = true;
            render();
          },
        },
      }),
      el('h2', { text: task.id }),
      badge(task),
      el('p', { class: 'note', text: facts }),
      task.statusMessage ? el('p', { text: task.statusMessage }) : null,
      el('h3', { text: 'Arguments' }),
      form.json(task.arguments),
    ].concat(form.questions(task));
    parts.push(
      output.section(task, function () {
        var now = state.tasks.get(id) || task;
        return state.selected === id && LIVE.indexOf(now.status) >= 0;
      }),
    );
    if (task.result !== undefined)
      parts.push(el('h3', { text: 'Result' }), output.downloadButton(task), form.json(task.result));
    if (task.error !== undefined) parts.push(el('h3', { text: 'Error' }), form.json(task.error));
    pane.replaceChildren.apply(pane, parts.concat(timeline(task)).filter(Boolean));
    pane.hidden = false;
    document.querySelectorAll('#tasks tbody tr').forEach(function (tr) {
      tr.classList.toggle('selected', tr.getAttribute('data-id') === id);
    });
  }

  function tick() {
    document.querySelectorAll('td.age').forEach(function (td) {
      td.textContent = age(td.getAttribute('data-created'));
    });
  }

  document.addEventListener('DOMContentLoaded', function () {
    $('login-form').addEventListener('submit', login);
    $('logout').addEventListener('click', function () {
      logout('');
    });
    ['f-status', 'f-waiting', 'f-tool', 'f-principal'].forEach(function (id) {
      $(id).addEventListener('change', loadList);
    });
    $('filters').addEventListener('submit', function (e) {
      e.preventDefault();
      loadList();
    });
    setInterval(tick, 1000);
    start();
  });
})();
