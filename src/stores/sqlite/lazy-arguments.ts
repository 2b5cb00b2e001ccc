import type { JsonObject, TaskRecord } from '../../task/record.js';

/**
 * Arguments whose JSON text is longer than this are parsed when first read, not when the record
 * is built. Smaller ones are parsed at once: a record keeps one shape, and a plain property is
 * what V8 reads fastest.
 */
export const LAZY_ARGUMENTS_CHARS = 16 * 1024;

/** The text of each record's arguments not read yet. */
const unparsed = new WeakMap<object, string>();

/** Makes `value` the record's plain `arguments`; false when the record is frozen or sealed. */
function settle(task: object, value: JsonObject): boolean {
  const settled = Reflect.defineProperty(task, 'arguments', {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  if (settled) unparsed.delete(task);
  return settled;
}

// One accessor pair for every record: per-record closures gave each record a hidden class of
// its own, and a record read that way cost V8 three to five times the parse itself.
const PARSED_WHEN_READ: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: object): JsonObject {
    const text = unparsed.get(this);
    if (text === undefined) {
      throw new TypeError(
        'taskrail: this copy of a task record has no arguments to read: copy records by value ' +
          '(a spread, structuredClone), not by their property descriptors',
      );
    }
    const value = JSON.parse(text) as JsonObject;
    settle(this, value); // a frozen record keeps the text, and parses it at each read
    return value;
  },
  set(this: object, value: JsonObject): void {
    if (!settle(this, value)) {
      throw new TypeError(
        "Cannot assign to read only property 'arguments' of a frozen task record",
      );
    }
  },
};

/**
 * Gives `task` the arguments of `text`, parsed at the first read of `task.arguments`. Most
 * records a store hands out are never asked for their arguments (a poll's `tasks/get`, a
 * listener's status, a write's outcome), and 1 MB of them took milliseconds to parse on every
 * one. The record stays a copy of its own: the first read parses the text into a plain
 * property, and an assignment replaces the value as on any record.
 */
export function parseArgumentsWhenRead(task: TaskRecord, text: string): void {
  unparsed.set(task, text);
  Object.defineProperty(task, 'arguments', PARSED_WHEN_READ);
}
