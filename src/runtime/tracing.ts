import { createRequire } from 'node:module';
import type { Attributes, Span } from '@opentelemetry/api';

type OtelApi = typeof import('@opentelemetry/api');

/**
 * Where every copy of `@opentelemetry/api` 1.x keeps what an application registers (its tracer
 * provider, context manager), so that copies loaded by different packages agree. Until
 * something is registered there, no span can record and the API need not be loaded at all:
 * it is ~90 modules and ~1.5 MiB of a resting server.
 */
const OTEL_GLOBAL = Symbol.for('opentelemetry.js.api.1');

let api: OtelApi | undefined;
let tracer: ReturnType<OtelApi['trace']['getTracer']> | undefined;

function registeredApi(): OtelApi | undefined {
  if ((globalThis as Record<symbol, unknown>)[OTEL_GLOBAL] === undefined) return undefined;
  // Synchronous, so the first task after an application registers its provider is traced too.
  api ??= createRequire(import.meta.url)('@opentelemetry/api') as OtelApi;
  return api;
}

/** What `work` gets while nothing is registered: a span that records nothing. */
const silentSpan = {
  setAttribute: () => silentSpan,
  isRecording: () => false,
} as unknown as Span;

/**
 * Runs `work` inside an OpenTelemetry span. Only `@opentelemetry/api` is used: without a
 * registered tracer provider (the user's app sets one up) every span is a no-op.
 */
export function traced<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const otel = registeredApi();
  if (otel === undefined) return work(silentSpan);
  // A proxy: it finds the provider the user's app registers, even after it was made.
  tracer ??= otel.trace.getTracer('taskrail');
  const span = tracer.startSpan(name, { attributes });
  // Without a tracer provider the span records nothing and carries its parent's context, which
  // is already the active one: the context switch and status calls would change nothing (and
  // an async wrapper would cost every task call a promise).
  if (!span.isRecording()) return work(span);
  return recorded(otel, span, work);
}

async function recorded<T>(
  otel: OtelApi,
  span: Span,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const { context, SpanStatusCode, trace } = otel;
  try {
    const value = await context.with(trace.setSpan(context.active(), span), () => work(span));
    span.setStatus({ code: SpanStatusCode.OK });
    return value;
  } catch (error) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
    throw error;
  } finally {
    span.end();
  }
}
