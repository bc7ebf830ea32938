/** Placeholder. */
export function SellersPage() {
  return <h1>SellersPage</h1>;
}
