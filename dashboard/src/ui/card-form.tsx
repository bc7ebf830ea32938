/**
 * A form shown as a card, named by its heading (aria-labelledby), that submits in place: the browser's own
 * submission (a page load) is prevented and `onSubmit` runs instead. Validation stays with the page.
 */
import type { ComponentChildren } from 'preact';

export function CardForm({
  labelledBy,
  onSubmit,
  children,
}: {
  /** The id of the heading that names the form. */
  labelledBy: string;
  onSubmit: () => void;
  children: ComponentChildren;
}) {
  return (
    <form
      class="card"
      aria-labelledby={labelledBy}
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      {children}
    </form>
  );
}
