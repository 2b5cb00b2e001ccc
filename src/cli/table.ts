/** Columns are at least this far apart, as in `kubectl get` and `docker ps`. */
const GAP = '   ';

/**
 * Lines of aligned columns: every column but the last is padded to its widest cell, so a
 * person can read down a column; the last one (a description, a message) runs free.
 */
export function alignColumns(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  }
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join(GAP)
      .trimEnd(),
  );
}
