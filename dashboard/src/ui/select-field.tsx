/**
 * A labelled select (class "field", as TextField): the label names the select by its id, `onValue` receives
 * the chosen option's value, typed as the options' values are. The options are the page's.
 */
export function SelectField<T extends string>({
  id,
  label,
  value,
  onValue,
  options,
}: {
  id: string;
  label: string;
  value: T;
  onValue: (value: T) => void;
  options: ReadonlyArray<{ value: T; label: string }>;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onValue((e.target as HTMLSelectElement).value as T)}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}
