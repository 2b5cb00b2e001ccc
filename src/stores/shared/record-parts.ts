import { TaskrailError } from '../../task/errors.js';
import { fixedFieldsOf, type FixedFields, type TaskRecord } from '../../task/record.js';

/**
 * The Redis and Postgres stores keep a record as two JSON texts: `fixed` (written once at
 * creation, so a compare-and-set can neither change nor re-send it) and `data` (everything a
 * write may change). Text, not a document type: a record must read back exactly as written.
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

/** `where` names the stored shape in the error ("postgres task row", "redis task hash"). */
export function decodeParts(fixed: unknown, data: unknown, where: string): TaskRecord {
  if (typeof fixed !== 'string' || typeof data !== 'string') {
    throw new TaskrailError('STORE_CORRUPT', `${where} lacks its JSON fields`);
  }
  try {
    return { ...(JSON.parse(data) as object), ...(JSON.parse(fixed) as FixedFields) } as TaskRecord;
  } catch (error) {
    throw new TaskrailError('STORE_CORRUPT', `${where} holds invalid JSON`, { cause: error });
  }
}
