/**
 * A labelled text input (class "field"): the label names the input by its id, `onValue` receives the typed
 * text, and `children` (a hint, an issue list) follow the input. The few input attributes the pages use pass
 * through.
 * Checking the value is the page's job.
 */
import type { ComponentChildren, InputHTMLAttributes } from 'preact';

export function TextField({
  id,
  label,
  value,
  onValue,
  children,
  type = 'text',
  ...more
}: {
  id: string;
  label: string;
  value: string;
  onValue: (value: string) => void;
  children?: ComponentChildren;
  type?: 'text' | 'password' | 'date';
  name?: string;
  inputMode?: 'decimal';
  autoComplete?: 'off';
  maxLength?: number;
  placeholder?: string;
  'aria-invalid'?: 'true' | 'false';
  'aria-describedby'?: string;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {/* One attribute object: Preact types each input type apart, and these attributes hold for all three. */}
      <input
        {...({ ...more, id, type, value } as InputHTMLAttributes<HTMLInputElement>)}
        onInput={(e) => onValue((e.target as HTMLInputElement).value)}
      />
      {children}
    </div>
  );
}
