/**
 * A policy as JSON in a labelled textarea, with the issues the page found in it listed below as it is typed
 * (aria-invalid while there are any; aria-describedby names the list), or else the page's hint. Finding the
 * issues is the page's job (policyIssues, ../pages/wallet-policy.tsx, checks with the API's own schema).
 */
import type { ComponentChildren } from 'preact';

export function PolicyField({
  id,
  label,
  value,
  onValue,
  issues,
  hint,
  placeholder,
  spellcheck,
}: {
  id: string;
  label: string;
  value: string;
  onValue: (value: string) => void;
  issues: readonly string[];
  /** Shown in the list's place while there is no issue. */
  hint: ComponentChildren;
  placeholder?: string;
  spellcheck?: boolean;
}) {
  const issuesId = `${id}-issues`;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea
        id={id}
        spellcheck={spellcheck}
        value={value}
        placeholder={placeholder}
        aria-invalid={issues.length ? 'true' : 'false'}
        aria-describedby={issuesId}
        onInput={(e) => onValue((e.target as HTMLTextAreaElement).value)}
      />
      <div id={issuesId} class="hint" aria-live="polite">
        {issues.length ? (
          <ul class="issues" data-testid="policy-issues">
            {issues.map((i) => (
              <li key={i}>{i}</li>
            ))}
          </ul>
        ) : (
          hint
        )}
      </div>
    </div>
  );
}
