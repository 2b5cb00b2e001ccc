import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  trace,
  type Span,
  type SpanOptions,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { tracedRuntime as tracedFace } from '../../src/server/tasks/tracing.js';
import type { TaskRuntimePort as TaskRuntimeFace } from '../../src/server/tasks/runtime-port.js';
import type { TaskRecord } from '../../src/task/record.js';
import { waitFor } from '../helpers/wait.js';
import { startHarness, type Harness } from './harness.js';

interface Recorded {
  name: string;
  attributes: Record<string, unknown>;
  ended: boolean;
  status?: number;
}

/** A minimal tracer provider written against the API only (no SDK), recording spans. */
function recordingProvider(spans: Recorded[]): TracerProvider {
  const tracer = {
    startSpan(name: string, options?: SpanOptions): Span {
      const record: Recorded = { name, attributes: { ...options?.attributes }, ended: false };
      spans.push(record);
      const span = trace.wrapSpanContext({
        traceId: '1'.repeat(32),
        spanId: '2'.repeat(16),
        traceFlags: 1,
      });
      return Object.assign(Object.create(span) as Span, {
        setAttribute: (key: string, value: unknown) => ((record.attributes[key] = value), span),
        setStatus: (status: { code: number }) => ((record.status = status.code), span),
        recordException: () => undefined,
        end: () => void (record.ended = true),
        isRecording: () => true,
      });
    },
  } as unknown as Tracer;
  return { getTracer: () => tracer };
}

describe('OpenTelemetry spans (API only, no SDK)', () => {
  const spans: Recorded[] = [];
  let h: Harness;
  before(async () => {
    trace.setGlobalTracerProvider(recordingProvider(spans));
    h = await startHarness({ admin: false });
  });
  after(async () => {
    await h.close();
    trace.disable();
  });

  it('wraps the execution of a task', async () => {
    const task = await h.create('quick');
    await waitFor('the execution span to end', () =>
      spans.find(
        (s) =>
          s.name === 'taskrail.task.execute' &&
          s.attributes['taskrail.task_id'] === task.id &&
          s.ended,
      ),
    );
  });

  it('wraps task creation and the tasks/* calls of the MCP face', async () => {
    const task = { id: 't-1', tool: 'quick' } as TaskRecord;
    const inner = {
      createTask: async () => task,
      getTask: async () => task,
      answerInput: async () => task,
      cancelTask: async () => {
        throw new Error('store down');
      },
    } as unknown as TaskRuntimeFace;
    const face = tracedFace(inner);
    await face.createTask({ tool: 'quick', arguments: {}, principal: 'p' });
    await face.getTask('t-1', 'p');
    await face.answerInput('t-1', 'p', {});
    await assert.rejects(face.cancelTask('t-1', 'p'), /store down/);
    const names = spans
      .filter((s) => s.attributes['taskrail.task_id'] === 't-1')
      .map((s) => s.name);
    assert.deepEqual(names, ['taskrail.task.create', 'tasks/get', 'tasks/update', 'tasks/cancel']);
    const cancel = spans.find((s) => s.name === 'tasks/cancel');
    assert.equal(cancel?.status, 2, 'an error status');
    assert.ok(spans.every((s) => s.ended));
  });
});
