import { TaskrailError } from '../../task/errors.js';
import { fixedFieldsOf, type FixedFields, type TaskRecord } from '../../task/record.js';

/**
 * A record is stored as two JSON texts: `fixed` (written once at creation, never by a
 * compare-and-set) and `data` (everything a write may change). Text, not jsonb: jsonb would
 * reorder keys and drop duplicate ones, and a record must read back exactly as written.
 */
export function encodeFixed(task: TaskRecord): string {
  return JSON.stringify(fixedFieldsOf(task));
}

export function encodeData(task: TaskRecord): string {
  const {
    id: _id,
    principal: _principal,
    tool: _tool,
    arguments: _arguments,
    createdAt: _createdAt,
    generation: _generation,
    idempotencyKey: _idempotencyKey,
    ...data
  } = task;
  return JSON.stringify(data);
}

export function decodeRecord(fixed: unknown, data: unknown): TaskRecord {
  if (typeof fixed !== 'string' || typeof data !== 'string') {
    throw new TaskrailError('STORE_CORRUPT', 'postgres task row lacks its JSON columns');
  }
  try {
    return { ...(JSON.parse(data) as object), ...(JSON.parse(fixed) as FixedFields) } as TaskRecord;
  } catch (error) {
    throw new TaskrailError('STORE_CORRUPT', 'postgres task row holds invalid JSON', {
      cause: error,
    });
  }
}
