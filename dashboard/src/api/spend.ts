/**
 * A wallet's balance and today's spend against its daily cap, through the public API: the balance route
 * (stale figures flagged by the API) and a dry run (policy/evaluate) of the smallest payment, whose headroom
 * is the room left today; spent = cap − room (the dry run's figure is after the tiny payment when allowed). The
 * probe's payee is a burn address of the wallet's family (../ui/network.ts).
 */
import type { WalletBalance } from '../../../src/shared/api-responses/wallet-responses';
import type { PolicyDecision } from '../../../policy/policy-types';
import { api, bearer, reply } from './client';
import { fromMicro, toMicro } from '../ui/money';
import { probeRecipient } from '../ui/network';

export interface DryRun extends PolicyDecision {
  wallet_id: string;
  dry_run: true;
}

export function readBalance(walletId: string, token: string): Promise<WalletBalance> {
  return reply<WalletBalance>(
    api.GET('/v1/wallets/{id}/balance', { params: { path: { id: walletId } }, headers: bearer(token) }),
  );
}

export function dryRun(
  walletId: string,
  token: string,
  body: { to: string; amount_usd: string; kind?: 'pay' | 'transfer'; capability?: string },
): Promise<DryRun> {
  return reply<DryRun>(
    api.POST('/v1/wallets/{id}/policy/evaluate', { params: { path: { id: walletId } }, headers: bearer(token), body }),
  );
}

/** Today's spend and the daily cap (USD strings), or null when the policy sets no daily cap. */
export async function todaySpend(
  wallet: { id: string; network: string; policy: Record<string, unknown> },
  token: string,
): Promise<{ spent: string; cap: string } | null> {
  const { id: walletId, policy } = wallet;
  const cap = typeof policy.daily_cap_usd === 'string' ? policy.daily_cap_usd : undefined;
  if (!cap) return null;
  const decision = await dryRun(walletId, token, { to: probeRecipient(wallet.network), amount_usd: '0.000001' });
  const left = decision.headroom.daily_usd;
  if (left === undefined) return null;
  const room = toMicro(left) + (decision.allowed ? 1n : 0n);
  return { spent: fromMicro(toMicro(cap) - room), cap };
}
