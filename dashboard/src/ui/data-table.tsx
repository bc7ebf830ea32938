/**
 * The one table shape every page uses: a horizontally scrolling wrapper (a labelled region the keyboard can
 * focus, to scroll it), a caption for screen readers, a header row of column headers (scope="col"), and the
 * page's own rows as children of the body. It leaves the rows to the page; `LinkedRowHeader` is the row header of a row that opens a thing (its name, its id).
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
    // A region the keyboard can focus and scroll, whether or not its rows hold a link (axe: scrollable-region-focusable).
    <div class="table-wrap" role="region" aria-label={caption} tabIndex={0}>
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

/** A row's header (scope="row") naming a thing: its label as a link to its page, its id below. */
export function LinkedRowHeader({ href, label, id }: { href: string; label: string; id: string }) {
  return (
    <th scope="row">
      <a href={href}>{label}</a>
      <div class="meta">
        <code>{id}</code>
      </div>
    </th>
  );
}
