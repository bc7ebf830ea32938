/**
 * Shared fixtures for the policy unit tests: the hostile-input table, two addresses, a clock, an empty spend
 * state, request builders with overrides, and a seeded generator (tests are repeatable: no Math.random).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseUsd } from '../../../policy/money.js';
import { walletPolicySchema, type WalletPolicy } from '../../../policy/policy-schema.js';
import type { SpendRequest, SpendState } from '../../../policy/policy-types.js';

export const hostile = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json'), 'utf8'),
) as Record<string, unknown[]>;

/** Checksummed (EIP-55) addresses from the EIP-55 test set and the hostile table. */
export const TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
export const OTHER = '0x857b06519E91e3A54538791bDbb0E22373e36b66';
export const THIRD = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
export const upper = (address: string): string => `0x${address.slice(2).toUpperCase()}`;

export const NOW = new Date('2026-11-22T12:00:00Z');
export const EMPTY: SpendState = {
  dailySpentMicro: 0n,
  weeklySpentMicro: 0n,
  monthlySpentMicro: 0n,
  lastPaymentAt: null,
  recentCount: 0,
};

export const pay = (usd: string, overrides: Partial<SpendRequest> = {}): SpendRequest => ({
  kind: 'pay',
  amountMicro: parseUsd(usd),
  to: TO,
  ...overrides,
});
export const transfer = (usd: string, overrides: Partial<SpendRequest> = {}): SpendRequest => ({
  kind: 'transfer',
  amountMicro: parseUsd(usd),
  to: TO,
  ...overrides,
});
export const policy = (p: unknown): WalletPolicy => walletPolicySchema.parse(p);
/** The four amount caps of a policy body (per payment, day, week, month), in USD strings. */
export const caps = (perTx: string, daily: string, weekly: string, monthly: string) => ({
  per_tx_cap_usd: perTx,
  daily_cap_usd: daily,
  weekly_cap_usd: weekly,
  monthly_cap_usd: monthly,
});
export const rules = (d: { violations: Array<{ rule: string }> }): string[] => d.violations.map((v) => v.rule);

/** splitmix64: a small seeded generator of 64-bit bigints. */
export function seeded(seed: bigint): { next64(): bigint; below(n: bigint): bigint; int(n: number): number } {
  const MASK = (1n << 64n) - 1n;
  let state = seed & MASK;
  const next64 = (): bigint => {
    state = (state + 0x9e3779b97f4a7c15n) & MASK;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
    return z ^ (z >> 31n);
  };
  const below = (n: bigint): bigint => {
    let bits = 0n;
    let acc = 0n;
    while (1n << bits < n * (1n << 64n)) {
      acc = (acc << 64n) | next64();
      bits += 64n;
    }
    return acc % n; // bias below 2^-64: irrelevant for tests
  };
  return { next64, below, int: (n: number) => Number(below(BigInt(n))) };
}
