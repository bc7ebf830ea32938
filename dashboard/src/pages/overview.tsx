/**
 * Overview (/dashboard/): the agents the session may see (the owner: every agent of the account; a session
 * from the CLI: its own agent), their active wallets, each balance (marked stale when the API could not read
 * the chain and answered its last figure) and today's spend against the wallet's daily cap. Each wallet's address
 * is shown as the API sends it (base58 for Solana) and its network by name, the CAIP-2 id in its title.
 */
import type { AgentPage, AgentView, WalletView } from '../../../src/shared/api-responses/wallet-responses';
import { api, reply } from '../api/client';
import { useSession } from '../api/session';
import { readBalance, todaySpend } from '../api/spend';
import { walletToken } from '../api/wallet-access';
import { SessionPage } from '../ui/session-page';
import { paths, to } from '../ui/paths';
import { Empty, ErrorBox, LoadedEach, Loading, useLoad } from '../ui/states';
import { usd } from '../ui/money';
import { networkName } from '../ui/network';
import { DataTable, LinkedRowHeader } from '../ui/data-table';

async function loadAgents(origin: string, agentId: string): Promise<AgentView[]> {
  if (origin === 'pat_exchange')
    return [await reply<AgentView>(api.GET('/v1/agents/{id}', { params: { path: { id: agentId } } }))];
  return (await reply<AgentPage>(api.GET('/v1/agents', { params: { query: { limit: 100 } } }))).agents;
}

function WalletRow({ wallet }: { wallet: WalletView }) {
  const [figures] = useLoad(async () => {
    const token = await walletToken(wallet.account_id);
    const [balance, spend] = await Promise.allSettled([readBalance(wallet.id, token), todaySpend(wallet, token)]);
    return { balance, spend };
  }, [wallet.id]);
  return (
    <tr data-testid="wallet-row">
      <LinkedRowHeader href={to(paths.wallet(wallet.id))} label={wallet.label ?? wallet.id} id={wallet.id} />
      <td class="address">
        <code data-testid="wallet-address">{wallet.address}</code>
      </td>
      <td title={wallet.network} data-testid="wallet-network">
        {networkName(wallet.network)}
      </td>
      {figures.state === 'ok' ? (
        <>
          <td>
            {figures.data.balance.status === 'fulfilled' ? (
              <>
                {usd(figures.data.balance.value.balance_usd)}
                {figures.data.balance.value.stale ? (
                  <span class="badge warn" title={`last read ${figures.data.balance.value.updated_at}`}>
                    stale
                  </span>
                ) : null}
              </>
            ) : (
              <ErrorBox error={figures.data.balance.reason} />
            )}
          </td>
          <td>
            {figures.data.spend.status === 'fulfilled' ? (
              figures.data.spend.value ? (
                <SpendBar spent={figures.data.spend.value.spent} cap={figures.data.spend.value.cap} />
              ) : (
                'no daily cap'
              )
            ) : (
              <ErrorBox error={figures.data.spend.reason} />
            )}
          </td>
        </>
      ) : figures.state === 'loading' ? (
        <td colSpan={2}>
          <Loading what="balance" />
        </td>
      ) : (
        <td colSpan={2}>
          <ErrorBox error={figures.error} />
        </td>
      )}
    </tr>
  );
}

function SpendBar({ spent, cap }: { spent: string; cap: string }) {
  const ratio = Math.min(1, Number(spent) / Number(cap) || 0);
  return (
    <div class="spend">
      <meter min={0} max={1} value={ratio} aria-label={`today's spend against the daily cap`} />
      <span>
        {usd(spent)} of {usd(cap)}
      </span>
    </div>
  );
}

function AgentCard({ agent }: { agent: AgentView }) {
  return (
    <section class="card" aria-labelledby={`agent-${agent.agent_id}`}>
      <h2 id={`agent-${agent.agent_id}`}>
        {agent.label ?? 'Agent'} <code class="meta">{agent.agent_id}</code>
      </h2>
      {agent.wallets.length === 0 ? (
        <Empty>
          No wallet yet. <a href={to(paths.newWallet)}>Create a wallet</a>.
        </Empty>
      ) : (
        <DataTable
          caption={`Wallets of ${agent.label ?? agent.agent_id}`}
          columns={['Wallet', 'Address', 'Network', 'Balance (USDC)', 'Today']}
        >
          {agent.wallets.map((w) => (
            <WalletRow key={w.id} wallet={w} />
          ))}
        </DataTable>
      )}
    </section>
  );
}

function Agents() {
  const session = useSession()!;
  const [agents] = useLoad(() => loadAgents(session.origin, session.agentId), [session.token]);
  return (
    <LoadedEach load={agents} what="agents" empty={<Empty>No agents yet: `xx init` makes the first one.</Empty>}>
      {(a) => <AgentCard key={a.agent_id} agent={a} />}
    </LoadedEach>
  );
}

export function OverviewPage() {
  return <SessionPage title="Overview">{() => <Agents />}</SessionPage>;
}
