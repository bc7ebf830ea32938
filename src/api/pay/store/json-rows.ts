/**
 * Rows as one JSON array of objects, for `jsonb_to_recordset(?::jsonb) AS x(column type, …)`: the pay
 * path's multi-row statements send one document per table instead of one array parameter per column.
 *
 * Why: node-postgres serialises each array parameter element by element (an escaped copy of every value,
 * the largest allocation site of the API under load), and PostgreSQL parses each array on its own. With
 * one document per table the API ran 4–7 scavenges in the bench's steady 400/s phase (10 runs, mostly 6)
 * against 7–8 with arrays (8 runs). Measured alone on the embedded server, a one-row SELECT over 44
 * columns costs 117–150 µs of backend CPU from one jsonb document against 407–417 µs from 44 arrays; in
 * the pay path's own statements the difference was within the run-to-run noise of this machine.
 *
 * Values: strings, numbers and null as JSON; a Date as its ISO string; a column typed `jsonb` takes its
 * value as JSON text already (embedded as it is, so the row holds the object, not a string) or as any other
 * value, serialised here (so a caller that may replace the value before it is sent serialises it once).
 * Defends: nothing beyond JSON.stringify's escaping. A `jsonb` value that is not valid JSON makes the whole
 * document invalid, so the statement fails and writes nothing.
 */
/**
 * The encoder of one table's rows, with its column keys and jsonb columns worked out once (the writers keep
 * one per table). A row is an array in column order, or — with `fields` — an object holding column i's value
 * in its field `fields[i]` (./decision-write.ts names its rows' fields this way).
 */
export function jsonRowsEncoder(
  columns: readonly string[],
  types: readonly string[],
  fields: ReadonlyArray<string | number> = columns.map((_, i) => i),
): (rows: ReadonlyArray<object>) => string {
  const keys = columns.map((c) => JSON.stringify(c) + ':');
  const raw = types.map((t) => t === 'jsonb');
  return (rows) => {
    let out = '[';
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r] as Record<string | number, unknown>;
      out += r === 0 ? '{' : ',{';
      for (let c = 0; c < keys.length; c++) {
        const value = row[fields[c]!];
        out +=
          (c === 0 ? '' : ',') +
          keys[c] +
          (value === null || value === undefined
            ? 'null'
            : raw[c] && typeof value === 'string'
              ? value
              : JSON.stringify(value));
      }
      out += '}';
    }
    return out + ']';
  };
}

/** `rows` of a table with these columns and types as one JSON document (see jsonRowsEncoder). */
export function jsonRows(
  columns: readonly string[],
  types: readonly string[],
  rows: ReadonlyArray<ReadonlyArray<unknown>>,
): string {
  return jsonRowsEncoder(columns, types)(rows);
}

/** The column definition list of `jsonb_to_recordset(…) AS x(…)`. */
export function recordsetColumns(columns: readonly string[], types: readonly string[]): string {
  return columns.map((c, i) => `${c} ${types[i]}`).join(', ');
}
