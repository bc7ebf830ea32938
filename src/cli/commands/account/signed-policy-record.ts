/**
 * The last policy document this CLI signed for each managed wallet and was told was set (`xx init`, `xx wallet policy
 * set`), kept on disk as `<XX_HOME>/signed-policies/<wallet id>.json` (0600): the wallet address the document named,
 * its version, policy hash and issued_at. `xx wallet policy verify` (./wallet-policy-verify.ts) checks the signer's
 * receipt against it — the address the receipt must recover to, and the version the signer must hold.
 *
 * Defends: the owner having to take the API's word for what they signed (a compromised API answers "applied" for a
 * document it withheld; this record is written from what the CLI itself signed). Does not defend: documents signed
 * elsewhere (the dashboard, another machine) — the record then lags, and verify says `mismatch` for a newer version
 * than it knows; the same local user rewriting the file.
 */
import path from 'node:path';
import { z } from 'zod';
import type { CliPaths } from '../../core/cli-paths.js';
import { readJsonFile, writeSecretJson } from '../../core/secret-file.js';

const WALLET_ID = /^wal_[0-9a-f]{24}$/;

export const signedPolicyRecordSchema = z
  .object({
    wallet_id: z.string().regex(WALLET_ID),
    /** The wallet address the document named (0x, or base58 for a Solana wallet). */
    address: z.string().min(32).max(44),
    version: z
      .number()
      .int()
      .min(1)
      .max(2 ** 48),
    policy_hash: z.string().regex(/^0x[0-9a-f]{64}$/),
    issued_at: z.number().int().min(0).max(253_402_300_799),
    /** When the API answered that it set the document (ISO 8601). */
    recorded_at: z.string().max(40),
  })
  .strict();
export type SignedPolicyRecord = z.infer<typeof signedPolicyRecordSchema>;

function recordFile(paths: CliPaths, walletId: string): string {
  // The id is checked before it names a file: nothing of it can leave the directory.
  if (!WALLET_ID.test(walletId)) throw new Error(`not a managed wallet id: ${walletId}`);
  return path.join(paths.root, 'signed-policies', `${walletId}.json`);
}

/** The last document recorded for the wallet, or undefined when this CLI recorded none. */
export function loadSignedPolicyRecord(paths: CliPaths, walletId: string): SignedPolicyRecord | undefined {
  return readJsonFile(recordFile(paths, walletId), signedPolicyRecordSchema);
}

/** Records a document the API said it set (replacing the wallet's earlier record). */
export function saveSignedPolicyRecord(paths: CliPaths, record: Omit<SignedPolicyRecord, 'recorded_at'>): void {
  const full = signedPolicyRecordSchema.parse({ ...record, recorded_at: new Date().toISOString() });
  writeSecretJson(recordFile(paths, record.wallet_id), full);
}

/** Records what `putOwnerSignedPolicy` (./owner-signed-policy.ts) was told the API set for `walletId`. */
export function recordSetDocument(
  paths: CliPaths,
  walletId: string,
  document: { walletAddress: string; version: number; issued_at: number; policy_hash: string },
): void {
  const { walletAddress, version, issued_at, policy_hash } = document;
  saveSignedPolicyRecord(paths, { wallet_id: walletId, address: walletAddress, version, issued_at, policy_hash });
}
