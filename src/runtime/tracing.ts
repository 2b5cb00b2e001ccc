import { context, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';

// A proxy: it finds the provider the user's app registers, even after this line ran.
const tracer = trace.getTracer('taskrail');

/**
 * Runs `work` inside an OpenTelemetry span. Only `@opentelemetry/api` is used: without a
 * registered tracer provider (the user's app sets one up) every span is a no-op.
 */
export function traced<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const span = tracer.startSpan(name, { attributes });
  // Without a tracer provider the span records nothing and carries its parent's context, which
  // is already the active one: the context switch and status calls would change nothing (and
  // an async wrapper would cost every task call a promise).
  if (!span.isRecording()) return work(span);
  return recorded(span, work);
}

async function recorded<T>(span: Span, work: (span: Span) => Promise<T>): Promise<T> {
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
