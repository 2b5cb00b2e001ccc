import type { LedgerEntry } from '../client/index.js';
import { reportError } from './host-output.js';
import type { ConnectionFlags } from './options.js';
import { withLiveStatus, type Row } from './tasks-list.js';
import { showJson, showText } from './tasks-format.js';

const SOURCES: Record<Row['source'], string> = {
  server: 'from the server',
  ended: 'from the ledger (the task had ended)',
  not_found: 'from the ledger (the server said it does not know the task)',
  unreachable: 'from the ledger (the server did not answer)',
};

/**
 * `tasks show ID`: the task as its server reports it now, else the ledger's last copy; a
 * `source` line (JSON: `source`) says which. The ledger is not written.
 */
export async function showTask(
  entry: LedgerEntry,
  flags: ConnectionFlags & { json?: boolean },
): Promise<number> {
  try {
    const [row] = await withLiveStatus([entry], flags);
    if (row === undefined) throw new Error(`no answer for task ${entry.id}`);
    const shown = current(row);
    const source = SOURCES[row.source];
    const text =
      flags.json === true
        ? `${JSON.stringify({ ...showJson(shown), source })}\n`
        : `${showText(shown)}source:     ${source}\n`;
    process.stdout.write(text);
    return 0;
  } catch (error) {
    return reportError(error);
  }
}

/** The ledger's entry with the server's status and message; its questions only while parked. */
function current(row: Row): LedgerEntry {
  if (row.source !== 'server' && row.source !== 'not_found') return row.entry;
  const { inputRequests, statusMessage: _old, ...rest } = row.entry;
  return {
    ...rest,
    status: row.status as LedgerEntry['status'],
    ...(row.statusMessage === undefined ? {} : { statusMessage: row.statusMessage }),
    ...(row.status === 'input_required' && inputRequests !== undefined ? { inputRequests } : {}),
  };
}
