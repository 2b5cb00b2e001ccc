import {
  sendJson,
  sseHead,
  type Exchange,
  type Json,
  type Step,
  type Vendor,
} from './scripted-model.js';

/**
 * The Gemini API (`models/M:generateContent`, `models/M:streamGenerateContent?alt=sse`), as
 * Gemini CLI speaks it. A request that offers no tools is a side request (Gemini CLI's routing
 * classifier in JSON mode): it gets JSON that matches the schema it asked for.
 */
export const geminiApi: Vendor = {
  name: 'Gemini API',
  parse(url, body) {
    if (!/:(stream)?[gG]enerateContent/.test(url)) return undefined;
    const tools = Array.isArray(body['tools']) ? (body['tools'] as Json[]) : [];
    const offered = tools.flatMap((tool) =>
      Array.isArray(tool['functionDeclarations'])
        ? (tool['functionDeclarations'] as Json[]).map((fn) => String(fn['name']))
        : [],
    );
    const contents = Array.isArray(body['contents']) ? (body['contents'] as Json[]) : [];
    return { main: offered.length > 0, history: historyOf(contents), offered };
  },
  answer(res, url, step) {
    const part =
      'text' in step ? { text: step.text } : { functionCall: { name: step.tool, args: step.args } };
    const chunk = {
      candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: 'gemini-2.5-pro',
    };
    if (!url.includes('streamGenerateContent')) return sendJson(res, 200, chunk);
    sseHead(res);
    res.end(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
  },
  other(res, url, body) {
    if (!/:(stream)?[gG]enerateContent/.test(url)) {
      if (url.includes('countTokens')) return sendJson(res, 200, { totalTokens: 10 });
      return sendJson(res, 404, {
        error: { code: 404, message: `no ${url} here`, status: 'NOT_FOUND' },
      });
    }
    const config = (body['generationConfig'] ?? {}) as Json;
    const schema = (config['responseJsonSchema'] ?? config['responseSchema']) as Json | undefined;
    const text = schema === undefined ? 'ok' : JSON.stringify(valueFor(schema));
    geminiApi.answer(res, url, { text }, body);
  },
};

/** A value matching a JSON schema (first enum value, empty-ish scalars), for JSON-mode side calls. */
function valueFor(schema: Json): unknown {
  if (Array.isArray(schema['enum'])) return (schema['enum'] as unknown[])[0];
  const type = String(schema['type'] ?? 'object').toLowerCase();
  if (type === 'object') {
    const properties = (schema['properties'] ?? {}) as Record<string, Json>;
    return Object.fromEntries(
      Object.entries(properties).map(([key, inner]) => [key, valueFor(inner)]),
    );
  }
  if (type === 'array') return [];
  if (type === 'boolean') return false;
  if (type === 'number' || type === 'integer') return Number(schema['minimum'] ?? 1);
  return 'scripted';
}

function historyOf(contents: Json[]): Exchange[] {
  const history: Exchange[] = [];
  const pending: Exchange[] = [];
  for (const content of contents) {
    const parts = Array.isArray(content['parts']) ? (content['parts'] as Json[]) : [];
    for (const part of parts) {
      const call = part['functionCall'] as Json | undefined;
      const response = part['functionResponse'] as Json | undefined;
      if (call !== undefined) {
        const exchange = {
          tool: String(call['name']),
          args: (call['args'] ?? {}) as Json,
          seen: '',
        };
        history.push(exchange);
        pending.push(exchange);
      } else if (response !== undefined) {
        const exchange = pending.shift();
        if (exchange !== undefined) exchange.seen = seenOf(response['response']);
      } else if (typeof part['text'] === 'string' && content['role'] === 'user') {
        // Extra parts after a function response (e.g. resource text) reach the model too.
        const last = history.at(-1);
        if (last !== undefined && last.seen !== '' && pending.length === 0)
          last.seen += part['text'];
      }
    }
  }
  return history;
}

function seenOf(response: unknown): string {
  const output = (response as Json | undefined)?.['output'];
  return typeof output === 'string' ? output : JSON.stringify(response);
}

export type { Step };
