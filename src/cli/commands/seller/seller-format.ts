/**
 * Plain-text rendering for the seller commands: aligned tables and key/value blocks. Output is for people
 * only; scripts use `--json`. Cells are stripped of control characters so a hostile name or route coming
 * back from the API cannot move the cursor or rewrite the terminal.
 */

type Cell = string | number | boolean | null | undefined;

/** A value as one printable line: no control characters, `-` for empty. */
export function cellText(value: Cell): string {
  if (value === null || value === undefined || value === '') return '-';
  // eslint-disable-next-line no-control-regex
  return String(value).replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
}

/** Columns padded to the widest cell; an empty list renders as `empty` (e.g. "No endpoints yet."). */
export function formatTable(headers: string[], rows: Cell[][], empty = '(none)'): string {
  if (rows.length === 0) return empty;
  const text = rows.map((r) => headers.map((_, i) => cellText(r[i])));
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers.map((h) => h.toUpperCase())), ...text.map(line)].join('\n');
}

/** `label: value` lines with the labels aligned. */
export function formatFields(fields: Array<[string, Cell]>): string {
  const width = Math.max(...fields.map(([k]) => k.length));
  return fields.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${cellText(v)}`).join('\n');
}
