/**
 * The one table shape every page uses: a horizontally scrolling wrapper, a caption for screen readers, a
 * header row of column headers (scope="col"), and the page's own rows as children of the body. It leaves
 * the rows (and each row's scope="row" header) to the page.
 */
import type { ComponentChildren } from 'preact';

export function DataTable({
  caption,
  columns,
  children,
}: {
  caption: string;
  columns: readonly string[];
  children: ComponentChildren;
}) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
