/**
 * A seller's endpoints as the public catalogue (GET /discovery/resources) shows them, from
 * GET /v1/sellers/{id}/discovery: listed or not and why (suspended, sold through the gate, origin missing or
 * not verified, unpriced, no payee on the catalogue's network), the price, the verified revenue and paid calls
 * of the last 30 days, and the uptime as the seller's gate reported it — labelled as such, since the platform
 * cannot check it.
 */
import type {
  SellerDiscovery,
  SellerDiscoveryEndpoint,
  UnlistedReason,
} from '../../../src/shared/api-responses/seller-discovery-responses';
import { api, bearer, reply } from '../api/client';
import { Card } from '../ui/card';
import { DataTable } from '../ui/data-table';
import { usd } from '../ui/money';
import { Empty, Loaded, useLoad } from '../ui/states';

const REASONS: Record<UnlistedReason, string> = {
  seller_not_active: 'the seller is suspended',
  gate_address_not_verified: "sold through the account's gate, whose public address is not verified",
  origin_not_set: 'no origin set',
  origin_not_verified: 'origin not verified',
  not_priced: 'not priced yet',
  no_pay_to: 'no pay-to address on the catalogue network',
};

function Uptime({ uptime }: { uptime: SellerDiscoveryEndpoint['uptime'] }) {
  if (!uptime) return <>—</>;
  const percent = (uptime.ratio * 100).toFixed(uptime.ratio === 1 ? 0 : 2);
  return (
    <>
      {percent}% of {uptime.samples.toLocaleString('en-US')} <span class="hint">(as reported by its gate)</span>
    </>
  );
}

function Listing({ e }: { e: SellerDiscoveryEndpoint }) {
  if (e.listed) return <span class="badge ok">listed</span>;
  return (
    <>
      <span class="badge warn">not listed</span> {e.reasons.map((r) => REASONS[r]).join('; ')}
    </>
  );
}

export function SellerDiscoveryCard({ sellerId, token }: { sellerId: string; token: string }) {
  const [load] = useLoad(
    () =>
      reply<SellerDiscovery>(
        api.GET('/v1/sellers/{id}/discovery', { params: { path: { id: sellerId } }, headers: bearer(token) }),
      ),
    [sellerId, token],
  );
  return (
    <Card titleId="discovery-title" title="In the public catalogue">
      <Loaded load={load} what="the catalogue view">
        {(d) =>
          d.endpoints.length === 0 ? (
            <Empty>No endpoints yet.</Empty>
          ) : (
            <DataTable
              caption={`Discovery on ${d.network}`}
              columns={['Endpoint', 'Discovery', 'Price', 'Revenue (30 days, verified)', 'Uptime (30 days)']}
            >
              {d.endpoints.map((e) => (
                <tr key={e.endpoint_id} data-testid="discovery-row">
                  <th scope="row">
                    <code>
                      {e.method} {e.path}
                    </code>
                  </th>
                  <td>
                    <Listing e={e} />
                  </td>
                  <td>{usd(e.price_usd)}</td>
                  <td>
                    {usd(e.revenue_30d_usd)} · {e.paid_calls_30d} calls
                  </td>
                  <td>
                    <Uptime uptime={e.uptime} />
                  </td>
                </tr>
              ))}
            </DataTable>
          )
        }
      </Loaded>
    </Card>
  );
}
