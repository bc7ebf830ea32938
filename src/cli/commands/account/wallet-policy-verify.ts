/**
 * `xx wallet policy verify [wal_…] [--address 0x…|<base58>] [--expect-version N [--expect-hash 0x…]]` (docs/cli.md,
 * "Owner-signed policies"): asks the signer, through the API, for a receipt of the policy it holds for the wallet
 * (GET /v1/wallets/{id}/policy/receipt) around 32 random bytes chosen here, checks it was signed by the wallet's own key — the address named in the last document
 * this CLI signed for the wallet (./signed-policy-record.ts), or `--address` — and answers for this nonce, then
 * compares the version and policy hash the signer holds with that document (without one: with what the API claims,
 * GET /v1/wallets/{id}/policy). `in_force` exits 0; `withheld` (the signer holds an older version than the owner
 * signed, or none) and `mismatch` print the comparison and exit 1; a receipt that does not verify exits 1 with
 * `policy_receipt_invalid`. With `--expect-version` (and `--expect-hash`) the receipt is compared with the document the
 * owner names instead — one signed elsewhere, e.g. in the dashboard — and the local record is left as it is: the
 * owner's word is not a document this machine signed.
 *
 * Defends: an API that withholds a tightening the owner signed and answers that it applied it — everything the owner
 * reads goes through it, but it cannot make the wallet's key sign (./policy-receipt-check.ts). Never takes the API's
 * word for the wallet's address when the CLI has a record of it. Does not defend: a wallet the CLI has no record of
 * and no `--address` for (refused: exit 2, since a receipt checked against the API's address proves nothing); the
 * state after the receipt's `signer_time`. EVM and Solana wallets alike: a Solana wallet's receipt is the Ed25519
 * signature of a Solana off-chain message rebuilt here from the statement and the address (./policy-receipt-check.ts).
 */
import { randomBytes } from 'node:crypto';
import { isAddress as isSolanaAddress } from '@solana/kit';
import { z } from 'zod';
import { walletPolicySchema as walletPolicyReplySchema } from '../../../shared/api-responses/pay-responses.js';
import type { BearerFlags } from '../../core/buyer-bearer.js';
import type { CliContext } from '../../core/cli-context.js';
import { CliError } from '../../core/cli-error.js';
import { formatFields } from '../seller/seller-format.js';
import { badArgument } from '../seller/seller-kit.js';
import {
  expectationStatus,
  ownerExpectationFromFlags,
  receiptStatus,
  verifyReceipt,
  type ExpectedDocument,
  type ReceiptFacts,
  type ReceiptStatus,
} from './policy-receipt-check.js';
import { loadSignedPolicyRecord } from './signed-policy-record.js';
import { targetWallet } from './target-wallet.js';

export interface PolicyVerifyOptions extends BearerFlags {
  address?: string;
  expectVersion?: string;
  expectHash?: string;
}

/** The receipt as the API relays it (src/api/wallets/policy-receipt.ts); its text and signature are checked here. */
const receiptReplySchema = z.object({
  wallet_id: z.string(),
  scheme: z.enum(['eip191', 'solana_offchain']),
  statement: z.string().max(1024),
  signature: z.string().max(132),
});

function describeHeld(facts: Pick<ReceiptFacts, 'version' | 'policy_hash'> | ExpectedDocument): string {
  if (facts.version === null) return 'no signed policy';
  return facts.policy_hash === null ? `version ${facts.version}` : `version ${facts.version} (${facts.policy_hash})`;
}

const COMPARED_LABEL = { local_record: 'last signed here', api: 'the API says', owner_flags: 'you expect' } as const;

export async function verifyWalletPolicy(
  ctx: CliContext,
  ref: string | undefined,
  opts: PolicyVerifyOptions,
): Promise<void> {
  if (opts.address !== undefined && !/^0x[0-9a-fA-F]{40}$/.test(opts.address) && !isSolanaAddress(opts.address))
    throw badArgument('--address', `a 0x or base58 Solana wallet address, got "${opts.address}"`);
  const expectation = ownerExpectationFromFlags(opts);
  const { client, wallet } = await targetWallet(ctx, opts, ref);
  const record = loadSignedPolicyRecord(ctx.paths, wallet.id);
  const address = opts.address ?? record?.address;
  if (address === undefined) {
    throw new CliError({
      code: 'wallet_address_unknown',
      userMessage: `This CLI has no record of a policy it signed for ${wallet.id}: pass --address with the wallet address named in the policy you signed (the API's word for it proves nothing).`,
      exitCode: 2,
      details: { flag: '--address' },
    });
  }
  const nonce = randomBytes(32).toString('hex');
  const receipt = await ctx.spin('Asking the signer for a receipt', () =>
    client.request('GET', `/v1/wallets/${wallet.id}/policy/receipt`, { query: { nonce }, reply: receiptReplySchema }),
  );
  const facts = await verifyReceipt(receipt, address, nonce);
  let expected: ExpectedDocument;
  let status: ReceiptStatus;
  let comparedWith: keyof typeof COMPARED_LABEL;
  if (expectation) {
    expected = expectation;
    status = expectationStatus(facts, expectation);
    comparedWith = 'owner_flags';
  } else if (record) {
    expected = { version: record.version, policy_hash: record.policy_hash };
    status = receiptStatus(facts, expected);
    comparedWith = 'local_record';
  } else {
    const claimed = await ctx.spin('Reading what the API says', () =>
      client.request('GET', `/v1/wallets/${wallet.id}/policy`, { reply: walletPolicyReplySchema }),
    );
    expected = { version: claimed.owner_policy.version, policy_hash: claimed.owner_policy.policy_hash };
    status = receiptStatus(facts, expected);
    comparedWith = 'api';
  }
  ctx.out(
    {
      wallet_id: wallet.id,
      address,
      address_source: opts.address !== undefined ? 'flag' : 'local_record',
      status,
      compared_with: comparedWith,
      expected,
      signer: facts,
      receipt: { statement: receipt.statement, signature: receipt.signature },
    },
    formatFields([
      ['status', status],
      ['wallet', `${wallet.id} ${address}`],
      ['signer holds', `${describeHeld(facts)} at ${new Date(facts.signer_time * 1000).toISOString()}`],
      [COMPARED_LABEL[comparedWith], describeHeld(expected)],
    ]),
  );
  if (status === 'in_force') return;
  throw new CliError({
    code: status === 'withheld' ? 'policy_withheld' : 'policy_mismatch',
    userMessage:
      status === 'withheld'
        ? `The signer holds ${describeHeld(facts)}, older than ${describeHeld(expected)}: the newer document never reached it. Sign it again (\`xx wallet policy set ${wallet.id}\`, or in the dashboard) and do not trust this API.`
        : `The signer holds ${describeHeld(facts)}, not ${describeHeld(expected)}.`,
    details: { status, expected, signer: { version: facts.version, policy_hash: facts.policy_hash } },
  });
}
