/**
 * Claim (/dashboard/claim): the way back from a lost Treasury api key. The api key is shown once and cannot
 * be recovered; the owner, signed in with the wallet, mints a Treasury PAT for the agent's Treasury account
 * (POST /v1/pats, shown once here) and, with it, revokes the lost key (POST
 * /v1/treasuries/{id}/api-key/revoke), so whoever finds the old key can do nothing with it.
 */
import { useState } from 'preact/hooks';
import type { CreatedPat } from '../../../src/shared/api-responses/pat-responses';
import type { AgentPage, AgentView } from '../../../src/shared/api-responses/wallet-responses';
import { api, bearer, reply } from '../api/client';
import { SessionPage } from '../ui/session-page';
import { ErrorBox, LoadedEach, useLoad } from '../ui/states';

function ClaimFor({ agent }: { agent: AgentView }) {
  const [pat, setPat] = useState<CreatedPat | null>(null);
  const [revoked, setRevoked] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const mint = () => {
    setError(null);
    reply<CreatedPat>(
      api.POST('/v1/pats', {
        body: { scope_type: 'treasury', scope_id: agent.treasury_account_id, label: 'claimed from the dashboard' },
      }),
    ).then(setPat, setError);
  };
  const revoke = () => {
    if (!pat) return;
    setError(null);
    reply(
      api.POST('/v1/treasuries/{id}/api-key/revoke', {
        params: { path: { id: agent.treasury_account_id } },
        headers: bearer(pat.pat),
      }),
    ).then(
      () => setRevoked('The lost api key is revoked.'),
      (err: unknown) => setError(err),
    );
  };
  return (
    <section class="card" aria-labelledby={`claim-${agent.agent_id}`}>
      <h2 id={`claim-${agent.agent_id}`}>
        {agent.label ?? 'Agent'} <code class="meta">{agent.treasury_account_id}</code>
      </h2>
      <ol class="steps">
        <li>
          <button type="button" class="primary" disabled={!!pat} onClick={mint}>
            Mint a Treasury PAT
          </button>{' '}
          It does what the api key did (wallets, policies, payments of this Treasury account).
          {pat ? (
            <div class="notice" role="status">
              <p>Shown once: store it now (e.g. `xx login --token …`).</p>
              <code class="secret" data-testid="claimed-pat">
                {pat.pat}
              </code>
            </div>
          ) : null}
        </li>
        <li>
          <button type="button" class="danger" disabled={!pat || !!revoked} onClick={revoke}>
            Revoke the lost api key
          </button>{' '}
          Idempotent; anything still using the old key stops working.
          {revoked ? (
            <p class="notice" role="status">
              {revoked}
            </p>
          ) : null}
        </li>
      </ol>
      {error ? <ErrorBox error={error} /> : null}
    </section>
  );
}

function Claim() {
  const [agents] = useLoad(
    async () => (await reply<AgentPage>(api.GET('/v1/agents', { params: { query: { limit: 100 } } }))).agents,
    [],
  );
  return (
    <LoadedEach load={agents} what="agents">
      {(a) => <ClaimFor key={a.agent_id} agent={a} />}
    </LoadedEach>
  );
}

export function ClaimPage() {
  return (
    <SessionPage
      title="Claim a lost api key"
      intro={
        <p>
          A Treasury api key is shown once and cannot be shown again. If it is lost, replace it with a Treasury PAT and
          revoke the key.
        </p>
      }
      owner
      reason="Claiming needs the owner: sign in with the wallet that owns the account."
    >
      {() => <Claim />}
    </SessionPage>
  );
}
