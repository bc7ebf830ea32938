/**
 * A card: a section named by its heading (aria-labelledby → the h2's id) with the page's content below. An
 * `action` (a Refresh button) stands at the heading's end, the two spread on one row. The content is the page's.
 */
import type { ComponentChildren } from 'preact';

export function Card({
  titleId,
  title,
  action,
  children,
}: {
  /** The id of the h2, which names the section. */
  titleId: string;
  title: ComponentChildren;
  action?: ComponentChildren;
  children: ComponentChildren;
}) {
  const heading = <h2 id={titleId}>{title}</h2>;
  return (
    <section class="card" aria-labelledby={titleId}>
      {action ? (
        <div class="row spread">
          {heading}
          {action}
        </div>
      ) : (
        heading
      )}
      {children}
    </section>
  );
}
