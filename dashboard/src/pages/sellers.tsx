/**
 * Sellers (/dashboard/sellers and /dashboard/sellers/{id}): the account's sellers, read with the owner's sign-in
 * (a session handed over by the CLI is asked for it instead: ../api/seller-access.ts), or the one a service PAT
 * opens; for a seller, its endpoints and prices, how they appear in the public catalogue (./sellers-discovery.tsx),
 * the origin verification steps with the token to serve,
 * payouts, and its ledger with revenue charts and CSV export (./seller-ledger.tsx).
 */
import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import type {
  EndpointPage,
  OriginVerification,
  SellerPage,
  SellerView,
  VerifiedSeller,
} from '../../../src/shared/api-responses/seller-responses';
import type { PayoutsPage } from '../../../src/shared/api-responses/seller-ledger-responses';
import { api, bearer, reply } from '../api/client';
import { forgetServicePat, openWithServicePat, useSellerAccess } from '../api/seller-access';
import { SignInPanel } from '../ui/sign-in-panel';
import { paths, to } from '../ui/paths';
import { Empty, ErrorBox, Loaded, useLoad } from '../ui/states';
import { usd } from '../ui/money';
import { when } from '../ui/format';
import { SellerLedger } from './seller-ledger';
import { SellerDiscoveryCard } from './sellers-discovery';
import { DataTable } from '../ui/data-table';
import { CardForm } from '../ui/card-form';
import { TextField } from '../ui/text-field';
import { Card } from '../ui/card';

function ServicePatForm() {
  const { route } = useLocation();
  const [value, setValue] = useState('');
  const [error, setError] = useState<unknown>(null);
  return (
    <CardForm
      labelledBy="service-pat-title"
      onSubmit={() => {
        setError(null);
        openWithServicePat(value.trim()).then((id) => {
          setValue('');
          route(to(paths.seller(id)));
        }, setError);
      }}
    >
      <h2 id="service-pat-title">Open a seller with its service PAT</h2>
      <TextField
        id="service-pat"
        label="Service PAT"
        value={value}
        onValue={(v) => setValue(v)}
        type="password"
        autoComplete="off"
      >
        <span class="hint">Kept in this tab’s memory only; reloading forgets it.</span>
      </TextField>
      <button type="submit" class="primary" disabled={!value.trim()}>
        Open
      </button>
      {error ? <ErrorBox error={error} /> : null}
    </CardForm>
  );
}

type SellerResource = '/v1/sellers/{id}' | '/v1/sellers/{id}/verify' | '/v1/sellers/{id}/payouts';

/** A seller's resource (`path`) read with `token`. */
function readSeller<T>(path: SellerResource, id: string, token: string): Promise<T> {
  return reply<T>(api.GET(path, { params: { path: { id } }, headers: bearer(token) }));
}

/** `readSeller` as a page's read, again when the seller or the token changes. */
function useSellerRead<T>(path: SellerResource, id: string, token: string) {
  return useLoad(() => readSeller<T>(path, id, token), [path, id, token]);
}

function SellerList({ token }: { token: string }) {
  const [sellers] = useLoad(
    () => reply<SellerPage>(api.GET('/v1/sellers', { params: { query: { limit: 100 } }, headers: bearer(token) })),
    [token],
  );
  return (
    <Card titleId="sellers-title" title="Your sellers">
      <Loaded load={sellers} what="sellers">
        {(page) =>
          page.sellers.length === 0 ? (
            <Empty>No sellers yet: `xx service init` registers one.</Empty>
          ) : (
            <ul>
              {page.sellers.map((s) => (
                <li key={s.seller_id}>
                  <a href={to(paths.seller(s.seller_id))}>{s.name}</a> <code class="meta">{s.seller_id}</code>
                  {s.status !== 'active' ? <span class="badge warn">{s.status}</span> : null}
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </Card>
  );
}

function OriginSteps({ seller, token }: { seller: SellerView; token: string }) {
  const [steps] = useSellerRead<OriginVerification>('/v1/sellers/{id}/verify', seller.seller_id, token);
  const [result, setResult] = useState<{ ok?: VerifiedSeller; error?: unknown } | null>(null);
  return (
    <Card titleId="origin-title" title="Origin verification">
      {seller.origin_verified ? (
        <p>
          <span class="badge ok">verified</span> {seller.origin} since {when(seller.verified_at)}
        </p>
      ) : null}
      <Loaded load={steps} what="the verification steps">
        {(v) => (
          <ol class="steps">
            <li>
              Serve this token as plain text at{' '}
              <code>
                {v.origin ?? '(your origin)'}
                {v.path}
              </code>
              :{' '}
              <code class="secret" data-testid="verification-token">
                {v.token}
              </code>
            </li>
            <li>Make sure the origin answers it over HTTPS (80/443) to anyone.</li>
            <li>
              <button
                type="button"
                onClick={() =>
                  reply<VerifiedSeller>(
                    api.POST('/v1/sellers/{id}/verify', {
                      params: { path: { id: seller.seller_id } },
                      headers: bearer(token),
                    }),
                  ).then(
                    (ok) => setResult({ ok }),
                    (error: unknown) => setResult({ error }),
                  )
                }
              >
                Verify now
              </button>
              {result?.ok ? <span class="badge ok">verified</span> : null}
              {result?.error ? <ErrorBox error={result.error} /> : null}
            </li>
          </ol>
        )}
      </Loaded>
    </Card>
  );
}

function Payouts({ sellerId, token }: { sellerId: string; token: string }) {
  const [payouts] = useSellerRead<PayoutsPage>('/v1/sellers/{id}/payouts', sellerId, token);
  return (
    <Card titleId="payouts-title" title="Payouts">
      <Loaded load={payouts} what="payouts">
        {(p) => (
          <>
            <p>
              Mode <code>{p.payout_mode}</code> · accrued (verified) {usd(p.accrued_usd)} · pending {usd(p.pending_usd)}{' '}
              ({p.pending_count}){p.advance_usd !== '0' ? ` · advanced ${usd(p.advance_usd)}` : ''}
            </p>
            {p.flushes.length === 0 ? (
              <Empty>No payout flushed yet.</Empty>
            ) : (
              <ul>
                {p.flushes.map((f) => (
                  <li key={f.id}>
                    {when(f.created_at)}: {usd(f.amount_usd)} <code class="meta">{f.id}</code>
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
      </Loaded>
    </Card>
  );
}

function Seller({ id, token }: { id: string; token: string }) {
  const [load] = useLoad(async () => {
    const [seller, endpoints] = await Promise.all([
      readSeller<SellerView>('/v1/sellers/{id}', id, token),
      reply<EndpointPage>(
        api.GET('/v1/sellers/{id}/endpoints', {
          params: { path: { id }, query: { limit: 100 } },
          headers: bearer(token),
        }),
      ),
    ]);
    return { seller, endpoints: endpoints.endpoints };
  }, [id, token]);
  return (
    <Loaded load={load} what="the seller">
      {({ seller, endpoints }) => (
        <>
          <Card
            titleId="seller-title"
            title={
              <>
                {seller.name} <code class="meta">{seller.seller_id}</code>
              </>
            }
          >
            <p>
              <span class={`badge ${seller.status === 'active' ? 'ok' : 'warn'}`}>{seller.status}</span>{' '}
              {seller.protocol} · payouts {seller.payout_mode} · origin {seller.origin ?? 'not set'}
            </p>
            <h3>Endpoints and prices</h3>
            {endpoints.length === 0 ? (
              <Empty>No endpoints yet.</Empty>
            ) : (
              <DataTable caption="Endpoints" columns={['Endpoint', 'Price', 'Capabilities']}>
                {endpoints.map((e) => (
                  <tr key={e.endpoint_id}>
                    <th scope="row">
                      <code>
                        {e.method} {e.path}
                      </code>
                    </th>
                    <td>{usd(e.price)}</td>
                    <td>{e.capabilities.join(', ') || '—'}</td>
                  </tr>
                ))}
              </DataTable>
            )}
          </Card>
          <SellerDiscoveryCard sellerId={seller.seller_id} token={token} />
          <SellerLedger sellerId={seller.seller_id} token={token} endpoints={endpoints} />
          <div class="grid">
            <Payouts sellerId={seller.seller_id} token={token} />
            <OriginSteps seller={seller} token={token} />
          </div>
        </>
      )}
    </Loaded>
  );
}

/** What the sign-in panel says to a session handed over by the CLI, which the API refuses sellers (403). */
const OWNER_NEEDED =
  'Seller pages need the owner’s sign-in. This session was handed over by the CLI and acts as the agent, which may not read the account’s sellers or their ledger: sign in with the wallet that owns the sellers, or open one seller with its service PAT.';

export function SellersPage() {
  const { params } = useRoute();
  const { token, sellerId, ownerNeeded } = useSellerAccess();
  return (
    <>
      <h1>Sellers</h1>
      {!token ? (
        <div class="grid">
          <SignInPanel
            reason={
              ownerNeeded
                ? OWNER_NEEDED
                : 'Sign in with the wallet that owns the sellers, or open one seller with its service PAT.'
            }
          />
          <ServicePatForm />
        </div>
      ) : params.id ? (
        <>
          {sellerId ? (
            <p class="hint">
              Opened with the service PAT of <code>{sellerId}</code>.{' '}
              <button type="button" onClick={forgetServicePat}>
                Forget it
              </button>
            </p>
          ) : null}
          <Seller id={params.id} token={token} />
        </>
      ) : sellerId ? (
        <p>
          <a href={to(paths.seller(sellerId))}>Open {sellerId}</a>
        </p>
      ) : (
        <>
          <SellerList token={token} />
          <ServicePatForm />
        </>
      )}
    </>
  );
}
