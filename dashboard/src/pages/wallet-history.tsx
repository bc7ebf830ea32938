/**
 * The wallet's recent decisions (GET /v1/wallets/{id}/decisions: `pd_` ids, outcome, amount, recipient, the
 * rules that refused) and its audit trail with the hash chain's state (GET /v1/wallets/{id}/audit).
 */
import type { WalletAudit, WalletDecisions } from '../../../src/shared/api-responses/wallet-history-responses';
import { api, bearer, reply } from '../api/client';
import { Empty, Loaded, useLoad } from '../ui/states';
import { usd } from '../ui/money';
import { when } from '../ui/format';
import { DataTable } from '../ui/data-table';

export function Decisions({ walletId, token, version }: { walletId: string; token: string; version: number }) {
  const [load, reload] = useLoad(
    () =>
      reply<WalletDecisions>(
        api.GET('/v1/wallets/{id}/decisions', {
          params: { path: { id: walletId }, query: { limit: 20 } },
          headers: bearer(token),
        }),
      ),
    [walletId, token, version],
  );
  return (
    <section class="card" aria-labelledby="decisions-title">
      <div class="row spread">
        <h2 id="decisions-title">Recent decisions</h2>
        <button type="button" onClick={reload}>
          Refresh decisions
        </button>
      </div>
      <Loaded load={load} what="decisions">
        {({ decisions }) =>
          decisions.length === 0 ? (
            <Empty>No payment decided yet.</Empty>
          ) : (
            <DataTable
              caption="Recent decisions, newest first"
              columns={['Decision', 'Outcome', 'Amount', 'To', 'Refused by']}
            >
              {decisions.map((d) => (
                <tr key={d.id} data-testid="decision-row">
                  <th scope="row">
                    <code>{d.id}</code>
                    <div class="meta">{when(d.created_at)}</div>
                  </th>
                  <td>
                    <span class={`badge ${d.outcome === 'allow' ? 'ok' : 'bad'}`}>
                      {d.outcome === 'allow' ? 'allowed' : 'refused'}
                    </span>
                    <div class="meta">{d.kind}</div>
                  </td>
                  <td>{usd(d.amount_usd)}</td>
                  <td class="address">
                    <code>{d.to}</code>
                  </td>
                  <td>
                    {d.violations.length
                      ? d.violations.map((v) => (
                          <div key={v.rule}>
                            <code>{v.rule}</code>
                            <div class="meta">{v.message}</div>
                          </div>
                        ))
                      : '—'}
                  </td>
                </tr>
              ))}
            </DataTable>
          )
        }
      </Loaded>
    </section>
  );
}

export function AuditTrail({ walletId, token, version }: { walletId: string; token: string; version: number }) {
  const [load, reload] = useLoad(
    () =>
      reply<WalletAudit>(
        api.GET('/v1/wallets/{id}/audit', {
          params: { path: { id: walletId }, query: { limit: 20 } },
          headers: bearer(token),
        }),
      ),
    [walletId, token, version],
  );
  return (
    <section class="card" aria-labelledby="audit-title">
      <div class="row spread">
        <h2 id="audit-title">Audit trail</h2>
        <button type="button" onClick={reload}>
          Refresh audit trail
        </button>
      </div>
      <Loaded load={load} what="the audit trail">
        {({ events, verification: v }) => (
          <>
            <p data-testid="audit-state">
              {v.state === 'verified' ? (
                <>
                  <span class="badge ok">chain verified</span> all {v.rows} events recomputed: every hash and link
                  holds.
                </>
              ) : v.state === 'broken' ? (
                <>
                  <span class="badge bad">chain broken</span> event {v.seq} does not hold (<code>{v.reason}</code>);
                  tell the operator (`npm run audit:verify -- {walletId}`).
                </>
              ) : (
                <>
                  <span class="badge warn">not checked here</span> {v.rows} events: the operator's `npm run audit:verify
                  -- {walletId}` recomputes a chain this long.
                </>
              )}
            </p>
            <DataTable caption="Audit events, newest first" columns={['#', 'Event', 'By', 'When', 'Hash']}>
              {events.map((e) => (
                <tr key={e.seq}>
                  <th scope="row">{e.seq}</th>
                  <td>
                    <code>{e.event_type}</code>
                  </td>
                  <td>
                    <code>{e.actor}</code>
                  </td>
                  <td>{when(e.created_at)}</td>
                  <td class="address">
                    <code title={e.hash}>{e.hash.slice(0, 16)}…</code>
                  </td>
                </tr>
              ))}
            </DataTable>
          </>
        )}
      </Loaded>
    </section>
  );
}
