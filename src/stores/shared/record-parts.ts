import { TaskrailError } from '../../task/errors.js';
import {
  fixedFieldsOf,
  type FixedFields,
  type TaskRecord,
  type TaskWire,
} from '../../task/record.js';

/**
 * The record's `wire` as stored: under its old name `generation`, with its old values, so that
 * rows and hashes written before the rename read back unchanged (and older nodes still read new
 * ones). Every store codec maps through these two functions.
 */
const STORED_WIRE: Record<TaskWire, string> = {
  '2026-07-28': 'v2',
  '2025-11-25': 'v1',
  local: 'local',
};

export function storedWire(wire: TaskWire): string {
  return STORED_WIRE[wire];
}

export function wireFromStored(stored: unknown, where: string): TaskWire {
  switch (stored) {
    case 'v2':
      return '2026-07-28';
    case 'v1':
      return '2025-11-25';
    case 'local':
      return 'local';
    default:
      throw new TaskrailError('STORE_CORRUPT', `${where} names an unknown wire: ${String(stored)}`);
  }
}

/**
 * The Redis and Postgres stores keep a record as two JSON texts: `fixed` (written once at
 * creation, so a compare-and-set can neither change nor re-send it) and `data` (everything a
 * write may change). Text, not a document type: a record must read back exactly as written.
 */
export function encodeFixed(task: TaskRecord): string {
  const { wire, ...fixed } = fixedFieldsOf(task);
  return JSON.stringify({ ...fixed, generation: storedWire(wire) });
}

export function encodeData(task: TaskRecord): string {
  const {
    id: _id,
    principal: _principal,
    tool: _tool,
    arguments: _arguments,
    createdAt: _createdAt,
    wire: _wire,
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
  let parsed: { data: object; fixed: StoredFixed };
  try {
    parsed = { data: JSON.parse(data) as object, fixed: JSON.parse(fixed) as StoredFixed };
  } catch (error) {
    throw new TaskrailError('STORE_CORRUPT', `${where} holds invalid JSON`, { cause: error });
  }
  const { generation, ...rest } = parsed.fixed;
  return { ...parsed.data, ...rest, wire: wireFromStored(generation, where) } as TaskRecord;
}

type StoredFixed = Omit<FixedFields, 'wire'> & { generation: unknown };
