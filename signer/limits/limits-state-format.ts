/**
 * The text of the signer's limits state file (./limits-state-file.ts), pure: how it is read and how its lines are
 * written. Its first line is the saved windows of every wallet, `{"v":1,"wallets":{wallet:{limit:[[bucket,sum],…]}}}`
 * — exactly the file earlier versions wrote (without a final newline), so their files load as they are, and a file
 * just compacted is one JSON document they read too. Each further line is a journal record, one wallet's complete
 * windows as they were when it was written, `{"w":wallet,"l":{limit:[[bucket,sum],…]}}`: the last line about a
 * wallet is what it holds (an empty `l`: nothing).
 *
 * Reading: every line is checked in full (the same schema for the windows as ever); what follows the last newline
 * is the part of a line an append did not finish (a crash, a full disk): it is dropped, and counted. Any other line
 * that is not a record makes the whole text no state file (the line is named): a file damaged in its middle is
 * refused, never half-trusted.
 *
 * Protects against: a torn last append stopping the signer (it is dropped: what it held was not yet saved), and a
 * corrupt or foreign file read as windows (refused). A wallet key the schema would refuse is never written: every
 * key is checked before its line is (`walletKeyReadsBack`, remembered per key: the same wallets recur every
 * second). The bucket lists are the limiter's own integers, bounded by the configured ceilings below 10^18;
 * checking them too on every save cost eight times the JSON itself.
 */
import { z } from 'zod';
import { SIGNER_LIMIT_NAMES, solanaAddressSchema } from '../protocol/signer-protocol.js';
import { BUCKETS } from './rolling-sum.js';
import type { LimiterSnapshot } from './wallet-limiter.js';

const rollingLimitName = z.enum(SIGNER_LIMIT_NAMES).exclude(['per_signature']);
/** A wallet as the limiter keys it: an EVM address in lower case, or a Solana wallet's base58 address of 32 bytes. */
const walletKeySchema = z.union([z.string().regex(/^0x[0-9a-f]{40}$/), solanaAddressSchema]);
const heldSchema = z.partialRecord(
  rollingLimitName,
  z
    .array(
      z.tuple([z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER), z.string().regex(/^[1-9][0-9]{0,18}$/)]),
    )
    .max(BUCKETS + 1),
);
const snapshotSchema = z.object({ v: z.literal(1), wallets: z.record(walletKeySchema, heldSchema) }).strict();
const recordSchema = z.object({ w: walletKeySchema, l: heldSchema }).strict();

/** One wallet's windows as the file keeps them: by limit name, `[bucket, sum]` oldest first, sums in decimal. */
export type WalletHeld = LimiterSnapshot['wallets'][string];

/** The first line's opening and closing, around `walletEntry`s joined by commas. */
export const SNAPSHOT_OPEN = '{"v":1,"wallets":{';
export const SNAPSHOT_CLOSE = '}}\n';

/** One wallet of the first line (without the separating comma). */
export function walletEntry(key: string, held: WalletHeld): string {
  return `${JSON.stringify(key)}:${JSON.stringify(held)}`;
}

/** One journal line: `key`'s complete windows now (`{}`: it holds nothing). */
export function journalLine(key: string, held: WalletHeld): string {
  return `{"w":${JSON.stringify(key)},"l":${JSON.stringify(held)}}\n`;
}

/** A whole snapshot as the first line of a file (the file then has no journal yet). */
export function snapshotText(snapshot: LimiterSnapshot): string {
  return JSON.stringify(snapshot) + '\n';
}

/** What a state file's text holds: the windows by wallet, the journal records read, the torn bytes dropped. */
export type ParsedLimitsState =
  { ok: true; snapshot: LimiterSnapshot; records: number; tornBytes: number } | { ok: false; line: number };

/** Reads a state file's text (see the header): the last record of each wallet wins over its first line. */
export function parseLimitsState(text: string): ParsedLimitsState {
  const firstEnd = text.indexOf('\n');
  const base = parseJson(firstEnd < 0 ? text : text.slice(0, firstEnd), snapshotSchema);
  if (!base) return { ok: false, line: 1 };
  const wallets: LimiterSnapshot['wallets'] = base.wallets;
  if (firstEnd < 0) return { ok: true, snapshot: { v: 1, wallets }, records: 0, tornBytes: 0 };
  const lastEnd = text.lastIndexOf('\n');
  let records = 0;
  let start = firstEnd + 1;
  while (start <= lastEnd) {
    const end = text.indexOf('\n', start);
    const record = parseJson(text.slice(start, end), recordSchema);
    if (!record) return { ok: false, line: records + 2 };
    if (Object.keys(record.l).length > 0) wallets[record.w] = record.l;
    else delete wallets[record.w];
    records++;
    start = end + 1;
  }
  const torn = text.slice(lastEnd + 1);
  return { ok: true, snapshot: { v: 1, wallets }, records, tornBytes: Buffer.byteLength(torn) };
}

function parseJson<T>(text: string, schema: z.ZodType<T>): T | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** Wallet keys already found readable: one check each, not one per save. */
const readableKeys = new Set<string>();
const MAX_READABLE_KEYS = 200_000;

/** Whether `key` is one the file's schema reads back as a wallet. */
export function walletKeyReadsBack(key: string): boolean {
  if (readableKeys.has(key)) return true;
  if (!walletKeySchema.safeParse(key).success) return false;
  if (readableKeys.size >= MAX_READABLE_KEYS) readableKeys.clear();
  readableKeys.add(key);
  return true;
}
