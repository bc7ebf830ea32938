/**
 * Create wallet (/dashboard/wallets/new, the `dashboard_url` of the `create_wallet` recovery): adds a managed
 * wallet to an agent (POST /v1/agents/{id}/wallets; the owner picks the agent, a session from the CLI adds
 * to its own) on a chosen chain, with an optional policy checked as the API checks it, then opens it.
 */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import type { AgentPage, WalletView } from '../../../src/shared/api-responses/wallet-responses';
import { api, reply } from '../api/client';
import { useSession } from '../api/session';
import { SessionPage } from '../ui/session-page';
import { paths, to } from '../ui/paths';
import { ErrorBox, Loaded, useLoad } from '../ui/states';
import { policyIssues } from './wallet-policy';
import { CardForm } from '../ui/card-form';
import { TextField } from '../ui/text-field';
import { SelectField } from '../ui/select-field';
import { PolicyField } from '../ui/policy-field';
import { useField } from '../ui/use-field';

const CHAINS = [
  { value: 'base-sepolia', label: 'Base Sepolia (testnet)' },
  { value: 'base', label: 'Base' },
  { value: 'solana-devnet', label: 'Solana Devnet (testnet)' },
];

function CreateWallet() {
  const session = useSession()!;
  const { route } = useLocation();
  const [agents] = useLoad(async () => {
    if (session.origin === 'pat_exchange') return [{ agent_id: session.agentId, label: 'this agent' }];
    return (await reply<AgentPage>(api.GET('/v1/agents', { params: { query: { limit: 100 } } }))).agents;
  }, [session.token]);
  const [agent] = useField('');
  const [label] = useField('');
  const [chain] = useField('base-sepolia');
  const [policy, setPolicy] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const issues = policy.trim() ? policyIssues(policy) : [];
  return (
    <Loaded load={agents} what="agents">
      {(list) => {
        const chosen = agent.value || list[0]?.agent_id || '';
        return (
          <CardForm
            labelledBy="create-title"
            onSubmit={() => {
              if (issues.length || !chosen) return;
              setBusy(true);
              setError(null);
              const body = {
                ...(label.value.trim() ? { label: label.value.trim() } : {}),
                chain: chain.value,
                ...(policy.trim() ? { policy: JSON.parse(policy) as unknown } : {}),
              };
              reply<WalletView>(
                // The route's body (label, chain, policy) is not in the OpenAPI document yet.
                api.POST('/v1/agents/{id}/wallets', { params: { path: { id: chosen } }, body: body as never }),
              ).then(
                (w) => route(to(paths.wallet(w.id))),
                (err: unknown) => {
                  setError(err);
                  setBusy(false);
                },
              );
            }}
          >
            <h2 id="create-title">New managed wallet</h2>
            <SelectField
              id="cw-agent"
              label="Agent"
              value={chosen}
              onValue={agent.onValue}
              options={list.map((a) => ({ value: a.agent_id, label: `${a.label ?? a.agent_id} (${a.agent_id})` }))}
            />
            <TextField id="cw-label" label="Label (optional)" {...label} maxLength={128} />
            <SelectField id="cw-chain" label="Chain" {...chain} options={CHAINS} />
            <PolicyField
              id="cw-policy"
              label="Policy (JSON, optional)"
              value={policy}
              onValue={setPolicy}
              placeholder='{"per_tx_cap_usd": "1", "daily_cap_usd": "10"}'
              issues={issues}
              hint="Without a policy the wallet has no limits until you set one."
            />
            <button type="submit" class="primary" disabled={busy || issues.length > 0 || !chosen}>
              {busy ? 'Creating…' : 'Create wallet'}
            </button>
            {error ? <ErrorBox error={error} /> : null}
          </CardForm>
        );
      }}
    </Loaded>
  );
}

export function CreateWalletPage() {
  return <SessionPage title="Create wallet">{() => <CreateWallet />}</SessionPage>;
}
