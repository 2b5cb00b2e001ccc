import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const TRACING = fileURLToPath(new URL('../../src/runtime/tracing.js', import.meta.url));

/** Reports on stderr every module resolved from @opentelemetry, ES module or CommonJS. */
const HOOK = `export async function resolve(specifier, context, next) {
  const found = await next(specifier, context);
  if (found.url.includes('@opentelemetry')) process.stderr.write('otel-module\\n');
  return found;
}`;
const REGISTER = `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOK)}));`;

/** Runs an ES module in a fresh node (nothing registered): its output, and whether it loaded OpenTelemetry. */
function fresh(body: string): { out: unknown; loaded: boolean } {
  const source = `import { traced } from ${JSON.stringify(TRACING)};\n${body}`;
  const child = spawnSync(
    process.execPath,
    [
      '--import',
      `data:text/javascript,${encodeURIComponent(REGISTER)}`,
      '--input-type=module',
      '-e',
      source,
    ],
    { encoding: 'utf8', cwd: fileURLToPath(new URL('../..', import.meta.url)) },
  );
  assert.equal(child.status, 0, child.stderr);
  return { out: JSON.parse(child.stdout) as unknown, loaded: child.stderr.includes('otel-module') };
}

describe('tracing without a registered provider', () => {
  it('runs the work with a silent span and never loads @opentelemetry/api', () => {
    const out = fresh(`
const value = await traced('t', { a: 1 }, async (span) => { span.setAttribute('b', 2); return span.isRecording() ? 'recording' : 'silent'; });
console.log(JSON.stringify(value));`);
    assert.deepEqual(out, { out: 'silent', loaded: false });
  });

  it('loads the API and records once an application registers a provider', () => {
    const out = fresh(`
const { trace } = await import('@opentelemetry/api');
const names = [];
const span = { setAttribute() { return span; }, setStatus() { return span; }, recordException() {}, end() {}, isRecording: () => true, spanContext: () => trace.INVALID_SPAN_CONTEXT };
trace.setGlobalTracerProvider({ getTracer: () => ({ startSpan: (name) => (names.push(name), span) }) });
const value = await traced('after-registration', {}, async (s) => s.isRecording());
console.log(JSON.stringify({ value, names }));`);
    assert.deepEqual(out, { out: { value: true, names: ['after-registration'] }, loaded: true });
  });
});
