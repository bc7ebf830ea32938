/** Placeholder. */
export function CreateWalletPage() {
  return <h1>CreateWalletPage</h1>;
}
