/**
 * The wallet's recent decisions (GET /v1/wallets/{id}/decisions: `pd_` ids, outcome, amount, recipient, the
 * rules that refused) and its audit trail with the hash chain's state (GET /v1/wallets/{id}/audit).
 */
import type { ComponentChildren } from 'preact';
import type { WalletAudit, WalletDecisions } from '../../../src/shared/api-responses/wallet-history-responses';
import { api, bearer, reply } from '../api/client';
import { Empty, Loaded, useLoad } from '../ui/states';
import { usd } from '../ui/money';
import { when } from '../ui/format';
import { DataTable } from '../ui/data-table';
import { Card } from '../ui/card';

interface WalletProps {
  walletId: string;
  token: string;
  /** Moves when the wallet changed here (a policy saved): both read again. */
  version: number;
}

/** A card of the wallet's last 20 rows of `path`, read again when `version` moves or its Refresh button is pressed. */
function RecentCard<T>({
  path,
  walletId,
  token,
  version,
  titleId,
  title,
  refresh,
  what,
  children,
}: WalletProps & {
  path: '/v1/wallets/{id}/decisions' | '/v1/wallets/{id}/audit';
  titleId: string;
  title: string;
  refresh: string;
  what: string;
  children: (data: T) => ComponentChildren;
}) {
  const [load, reload] = useLoad(
    () => reply<T>(api.GET(path, { params: { path: { id: walletId }, query: { limit: 20 } }, headers: bearer(token) })),
    [path, walletId, token, version],
  );
  return (
    <Card
      titleId={titleId}
      title={title}
      action={
        <button type="button" onClick={reload}>
          {refresh}
        </button>
      }
    >
      <Loaded load={load} what={what}>
        {children}
      </Loaded>
    </Card>
  );
}

export function Decisions(props: WalletProps) {
  return (
    <RecentCard<WalletDecisions>
      {...props}
      path="/v1/wallets/{id}/decisions"
      titleId="decisions-title"
      title="Recent decisions"
      refresh="Refresh decisions"
      what="decisions"
    >
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
                  {d.decided_by === 'signer' ? (
                    <div class="meta" data-testid="decided-by-signer">
                      refused by the signer (owner-signed policy)
                    </div>
                  ) : null}
                </td>
              </tr>
            ))}
          </DataTable>
        )
      }
    </RecentCard>
  );
}

export function AuditTrail(props: WalletProps) {
  const { walletId } = props;
  return (
    <RecentCard<WalletAudit>
      {...props}
      path="/v1/wallets/{id}/audit"
      titleId="audit-title"
      title="Audit trail"
      refresh="Refresh audit trail"
      what="the audit trail"
    >
      {({ events, verification: v }) => (
        <>
          <p data-testid="audit-state">
            {v.state === 'verified' ? (
              <>
                <span class="badge ok">chain verified</span> all {v.rows} events recomputed: every hash and link holds.
              </>
            ) : v.state === 'broken' ? (
              <>
                <span class="badge bad">chain broken</span> event {v.seq} does not hold (<code>{v.reason}</code>); tell
                the operator (`npm run audit:verify -- {walletId}`).
              </>
            ) : (
              <>
                <span class="badge warn">not checked here</span> {v.rows} events were not recomputed by this request (a
                chain this long, or a busy verifier): refresh, or the operator's `npm run audit:verify -- {walletId}`
                checks it.
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
    </RecentCard>
  );
}
