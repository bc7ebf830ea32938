/** Placeholder. */
export function TokensPage() {
  return <h1>TokensPage</h1>;
}
