import type { TaskRecord } from '../../task/record.js';
import { decodeParts } from '../shared/record-parts.js';

export { encodeData, encodeFixed } from '../shared/record-parts.js';

/** A row's `fixed` and `data` columns (see ../shared/record-parts.ts) as the record. */
export function decodeRecord(fixed: unknown, data: unknown): TaskRecord {
  return decodeParts(fixed, data, 'postgres task row');
}
