/** Placeholder. */
export function WalletPage() {
  return <h1>WalletPage</h1>;
}
