/*
 * The part of the dashboard script that turns an elicitation's `requestedSchema` into a form:
 * enum → select, boolean → checkbox, number/integer → number input, string → text input.
 * Values are checked here before anything is sent (the tool cannot re-ask a person who typed
 * "abc" for a number). A schema it cannot render gets `null`, and the page falls back to raw
 * JSON. Also the detail pane's "Pending input" section that holds those forms, and sends the
 * answers. Loaded before dashboard.js, which calls it with what it shares of the page (`el`,
 * `api`, `upsert`, the operator).
 */
'use strict';

// eslint-disable-next-line @typescript-eslint/no-unused-vars -- called by dashboard.js
function taskrailAnswerForm(page) {
  var el = page.el;

  function fieldKind(schema) {
    if (!schema || typeof schema !== 'object') return null;
    var strings = function (list) {
      return list.every(function (v) {
        return typeof v === 'string';
      });
    };
    if (Array.isArray(schema.enum) && schema.enum.length > 0 && strings(schema.enum)) return 'enum';
    if (
      Array.isArray(schema.oneOf) &&
      schema.oneOf.length > 0 &&
      schema.oneOf.every(function (o) {
        return o && typeof o.const === 'string';
      })
    )
      return 'enum';
    if (schema.type === 'boolean') return 'boolean';
    if (schema.type === 'number' || schema.type === 'integer') return 'number';
    if (schema.type === 'string') return 'string';
    return null;
  }

  function formSchema(request) {
    var params = request.params || {};
    if (request.method !== 'elicitation/create' || (params.mode && params.mode !== 'form'))
      return null;
    var schema = params.requestedSchema;
    if (
      !schema ||
      schema.type !== 'object' ||
      !schema.properties ||
      typeof schema.properties !== 'object'
    )
      return null;
    var names = Object.keys(schema.properties);
    if (
      !names.every(function (n) {
        return fieldKind(schema.properties[n]);
      })
    )
      return null;
    var required = Array.isArray(schema.required) ? schema.required : [];
    return names.map(function (name) {
      return { name: name, schema: schema.properties[name], required: required.indexOf(name) >= 0 };
    });
  }

  function enumOptions(schema) {
    if (Array.isArray(schema.enum)) {
      return schema.enum.map(function (v, i) {
        return { value: v, label: (Array.isArray(schema.enumNames) && schema.enumNames[i]) || v };
      });
    }
    return schema.oneOf.map(function (o) {
      return { value: o.const, label: o.title || o.const };
    });
  }

  function fieldInput(field) {
    var schema = field.schema,
      kind = fieldKind(schema),
      input;
    if (kind === 'enum') {
      var blank = el('option', { value: '', text: field.required ? 'choose…' : '—' });
      input = el(
        'select',
        {},
        [blank].concat(
          enumOptions(schema).map(function (o) {
            return el('option', { value: o.value, text: o.label });
          }),
        ),
      );
    } else if (kind === 'boolean') {
      input = el('input', { type: 'checkbox' });
      input.checked = schema.default === true;
    } else if (kind === 'number') {
      input = el('input', { type: 'number', step: schema.type === 'integer' ? '1' : 'any' });
      if (typeof schema.minimum === 'number') input.min = String(schema.minimum);
      if (typeof schema.maximum === 'number') input.max = String(schema.maximum);
    } else {
      input = el('input', { type: 'text' });
    }
    if (kind !== 'boolean' && schema.default !== undefined) input.value = String(schema.default);
    input.name = field.name;
    if (field.required) input.setAttribute('aria-required', 'true');
    var title = (schema.title || field.name) + (field.required ? ' *' : '');
    return el('label', { class: 'field' + (field.required ? ' required' : '') }, [
      el('span', { text: title }),
      input,
      schema.description ? el('small', { class: 'note', text: schema.description }) : null,
    ]);
  }

  function numberProblem(schema, number) {
    if (!isFinite(number)) return 'must be a number';
    if (schema.type === 'integer' && !Number.isInteger(number)) return 'must be a whole number';
    if (typeof schema.minimum === 'number' && number < schema.minimum)
      return 'must be at least ' + schema.minimum;
    if (typeof schema.maximum === 'number' && number > schema.maximum)
      return 'must be at most ' + schema.maximum;
    return null;
  }

  function stringProblem(schema, text) {
    if (typeof schema.minLength === 'number' && text.length < schema.minLength)
      return 'needs at least ' + schema.minLength + ' characters';
    if (typeof schema.maxLength === 'number' && text.length > schema.maxLength)
      return 'takes at most ' + schema.maxLength + ' characters';
    if (schema.format === 'email' && !/^[^@\s]+@[^@\s]+$/.test(text))
      return 'must be an e-mail address';
    return null;
  }

  /** { value } or { error } or {} (an empty optional field, left out). */
  function readField(field, input) {
    var schema = field.schema,
      kind = fieldKind(schema);
    if (kind === 'boolean') return { value: input.checked };
    var text = kind === 'string' ? input.value : input.value.trim();
    if (text === '') return field.required ? { error: 'is required' } : {};
    if (kind === 'enum') {
      var allowed = enumOptions(schema).map(function (o) {
        return o.value;
      });
      return allowed.indexOf(text) >= 0
        ? { value: text }
        : { error: 'must be one of ' + allowed.join(', ') };
    }
    if (kind === 'number') {
      var number = Number(text),
        problem = numberProblem(schema, number);
      return problem ? { error: problem } : { value: number };
    }
    var wrong = stringProblem(schema, text);
    return wrong ? { error: wrong } : { value: text };
  }

  /** The form for one question; onAnswer(value) gets the MCP elicitation result to send. */
  function answerForm(key, fields, principal, onAnswer) {
    var inputs = fields.map(fieldInput);
    var problem = el('p', { class: 'form-error', role: 'alert' });
    var form = el(
      'form',
      { class: 'answer-form', 'data-key': key, novalidate: '' },
      inputs.concat([
        problem,
        el('div', { class: 'actions' }, [
          el('button', { type: 'submit', class: 'answer', text: 'Answer as ' + principal }),
          el('button', {
            type: 'button',
            class: 'decline',
            text: 'Decline',
            on: {
              click: function () {
                onAnswer({ action: 'decline' });
              },
            },
          }),
        ]),
      ]),
    );
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var content = {},
        errors = [];
      fields.forEach(function (field, i) {
        var input = inputs[i].querySelector('input, select');
        var read = readField(field, input);
        input.classList.toggle('invalid', Boolean(read.error));
        if (read.error) errors.push((field.schema.title || field.name) + ' ' + read.error);
        else if ('value' in read) content[field.name] = read.value;
      });
      problem.textContent = errors.join('; ');
      if (errors.length === 0) onAnswer({ action: 'accept', content: content });
    });
    return form;
  }

  function json(value) {
    return el('pre', { text: JSON.stringify(value, null, 2) });
  }

  function answerTemplate(request) {
    if (request.method === 'elicitation/create') return { action: 'accept', content: {} };
    return {};
  }

  function questions(task) {
    var keys = Object.keys(task.pendingInputRequests);
    if (keys.length === 0) return [];
    var may = page.operator().canAnswer && task.status === 'input_required';
    var out = [el('h3', { text: 'Pending input' })];
    keys.forEach(function (key) {
      var request = task.pendingInputRequests[key];
      var params = request.params || {};
      out.push(el('div', { class: 'note', text: key + ' · ' + request.method }));
      if (typeof params.message === 'string')
        out.push(el('p', { class: 'question', text: params.message }));
      var fields = formSchema(request);
      if (!may || !fields) out.push(json(params));
      if (!may) return;
      var send = function (value) {
        answer(task.id, key, value);
      };
      if (fields) {
        out.push(answerForm(key, fields, task.principal, send));
        return;
      }
      out.push(
        el('p', {
          class: 'note',
          text: 'This question cannot be shown as a form: answer with JSON.',
        }),
      );
      var area = el('textarea', { 'data-key': key });
      area.value = JSON.stringify(answerTemplate(request), null, 2);
      out.push(
        area,
        el('button', {
          type: 'button',
          class: 'answer',
          text: 'Answer as ' + task.principal,
          on: {
            click: function () {
              answerRaw(task.id, key, area.value);
            },
          },
        }),
      );
    });
    if (!may) out.push(el('p', { class: 'note', text: 'This admin token may not answer input.' }));
    return out;
  }

  function answerRaw(id, key, text) {
    var value;
    try {
      value = JSON.parse(text);
    } catch (e) {
      return window.alert('The answer is not valid JSON.');
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      return window.alert(
        'The answer must be a JSON object, such as {"action": "accept", "content": {}}.',
      );
    }
    return answer(id, key, value);
  }

  async function answer(id, key, value) {
    var responses = {};
    responses[key] = value;
    var res = await page.api('tasks/' + id + '/answer', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ inputResponses: responses }),
    });
    var body = await res.json();
    if (body.task) page.upsert(body.task);
    if (!res.ok) window.alert('Not answered: ' + (body.message || body.error || res.status));
  }

  return { questions: questions, json: json };
}
