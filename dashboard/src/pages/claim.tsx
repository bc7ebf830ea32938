/** Placeholder. */
export function ClaimPage() {
  return <h1>ClaimPage</h1>;
}
