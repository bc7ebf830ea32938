/**
 * Wallet (/dashboard/wallets/{id}): the wallet's address (as the API sends it: base58 for Solana), network (by
 * name, with its CAIP-2 id), key version and balance (stale marked),
 * its policy editor (owner-signed through the browser wallet) with a live dry run (./wallet-policy.tsx), its
 * recent decisions and audit trail with the chain's state (./wallet-history.tsx), and rotate and revoke with
 * the balance guard explained: the API refuses to destroy a key whose address holds USDC (409 wallet_has_balance) or whose
 * balance it cannot read (409 balance_unknown) unless the owner says to abandon the balance, nor the key of a wallet
 * whose owner-signed policy does not allow it (409 key_destruction_not_allowed: the API's message, and how to allow it).
 */
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import type { WalletView } from '../../../src/shared/api-responses/wallet-responses';
import { api, ApiError, bearer, reply } from '../api/client';
import { readBalance } from '../api/spend';
import { canManageWallets } from '../api/wallet-access';
import { loadWallet } from '../api/wallet-context';
import { SessionPage } from '../ui/session-page';
import { ErrorBox, Loaded, Loading, Outcome, useLoad } from '../ui/states';
import { usd } from '../ui/money';
import { when } from '../ui/format';
import { networkName } from '../ui/network';
import { DryRunPanel, PolicyEditor } from './wallet-policy';
import { AuditTrail, Decisions } from './wallet-history';

function Balance({ walletId, token }: { walletId: string; token: string }) {
  const [balance] = useLoad(() => readBalance(walletId, token), [walletId, token]);
  if (balance.state === 'loading') return <Loading what="balance" />;
  if (balance.state === 'error') return <ErrorBox error={balance.error} />;
  return (
    <p>
      <strong data-testid="balance">{usd(balance.data.balance_usd)}</strong> USDC
      {balance.data.stale ? <span class="badge warn">stale · last read {when(balance.data.updated_at)}</span> : null}
    </p>
  );
}

function Retire({ wallet, token, onDone }: { wallet: WalletView; token: string; onDone: (w: WalletView) => void }) {
  const [abandon, setAbandon] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const owner = canManageWallets();
  const act = async (what: 'rotate' | 'revoke') => {
    setError(null);
    setDone(null);
    try {
      const path = what === 'rotate' ? '/v1/wallets/{id}/rotate' : '/v1/wallets/{id}/revoke';
      const res = await reply<WalletView>(
        api.POST(path, {
          params: { path: { id: wallet.id } },
          headers: bearer(token),
          body: abandon ? { abandon_balance: true } : {},
        }),
      );
      setDone(what === 'rotate' ? `Rotated: new address ${res.address}.` : 'Revoked.');
      onDone(res);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section class="card" aria-labelledby="retire-title">
      <h2 id="retire-title">Rotate or revoke</h2>
      <p class="hint">
        Rotating gives the wallet a new key and address (same id, history kept); revoking ends it. Both destroy the old
        key in the HSM, so USDC left at its address would be lost for good: the API refuses while the address holds USDC
        or its balance cannot be read. Move the funds first, or tick the box below to abandon them. Under an
        owner-signed policy the key is destroyed only if that policy allows it (<code>allow_key_destruction</code>).
      </p>
      <div class="field">
        <label>
          <input
            type="checkbox"
            checked={abandon}
            onChange={(e) => setAbandon((e.target as HTMLInputElement).checked)}
          />{' '}
          Abandon any balance at the current address
        </label>
      </div>
      <div class="row">
        <button type="button" disabled={!owner || wallet.status !== 'active'} onClick={() => void act('rotate')}>
          Rotate key
        </button>
        <button
          type="button"
          class="danger"
          disabled={!owner || wallet.status !== 'active'}
          onClick={() => void act('revoke')}
        >
          Revoke wallet
        </button>
      </div>
      {!owner ? <p class="hint">Rotating and revoking need the owner's sign-in.</p> : null}
      <Outcome notice={done} error={error} />
      {error instanceof ApiError && error.code === 'key_destruction_not_allowed' ? (
        <p class="hint" data-testid="key-destruction-hint">
          To allow it, add <code>"allow_key_destruction": true</code> to the policy above and save it: your browser
          wallet signs the new version.
        </p>
      ) : null}
    </section>
  );
}

function Wallet({ id }: { id: string }) {
  const [load] = useLoad(() => loadWallet(id), [id]);
  const [policyVersion, setPolicyVersion] = useState(0);
  const [current, setCurrent] = useState<WalletView | null>(null);
  return (
    <Loaded load={load} what="the wallet">
      {({ wallet: fetched, token }) => {
        const wallet = current ?? fetched;
        return (
          <>
            <section class="card" aria-labelledby="wallet-title">
              <h2 id="wallet-title">
                {wallet.label ?? 'Wallet'} <code class="meta">{wallet.id}</code>
              </h2>
              <dl class="facts">
                <div>
                  <dt>Address</dt>
                  <dd>
                    <code data-testid="wallet-address">{wallet.address}</code>
                  </dd>
                </div>
                <div>
                  <dt>Network</dt>
                  <dd data-testid="wallet-network">
                    {networkName(wallet.network)} <code class="meta">{wallet.network}</code>
                  </dd>
                </div>
                <div>
                  <dt>Status</dt>
                  <dd>{wallet.status}</dd>
                </div>
                <div>
                  <dt>Key version</dt>
                  <dd>{wallet.key_version}</dd>
                </div>
              </dl>
              <Balance walletId={wallet.id} token={token} />
            </section>
            <div class="grid">
              <PolicyEditor
                walletId={wallet.id}
                walletAddress={wallet.address}
                token={token}
                policy={wallet.policy}
                onSaved={(policy) => {
                  setCurrent({ ...wallet, policy });
                  setPolicyVersion((v) => v + 1);
                }}
              />
              <DryRunPanel walletId={wallet.id} network={wallet.network} token={token} policyVersion={policyVersion} />
            </div>
            <Decisions walletId={wallet.id} token={token} version={policyVersion} />
            <AuditTrail walletId={wallet.id} token={token} version={policyVersion} />
            <Retire wallet={wallet} token={token} onDone={setCurrent} />
          </>
        );
      }}
    </Loaded>
  );
}

export function WalletPage() {
  const { params } = useRoute();
  return <SessionPage title="Wallet">{() => <Wallet id={params.id ?? ''} />}</SessionPage>;
}
