/**
 * `xx wallet policy {show,set,verify} [wal_…]` (docs/cli.md, "Owner-signed policies"): a managed wallet's policy
 * (default: the agent's first wallet). `show` reads it with the agent's credentials and says whether the
 * signer holds it owner-signed, by whom, at which version. `set` builds the new policy — the current one, or
 * `--file`'s, with `--max-per-payment` / `--daily-limit` / `--key-destruction` applied — checks it with the
 * schema the API uses, then signs the owner in with the seed and has the seed's key sign it
 * (./owner-signed-policy.ts). The current one is the API's copy, built on only when it is the document the
 * signer holds (./policy-copy.ts).
 *
 * Defends: an agent changing its own wallet's policy — `set` needs the owner's seed (its passphrase), and the
 * signer refuses a document the wallet's authority did not sign; a rewritten copy of the current policy signed
 * unnoticed (`policy_copy_mismatch`). Does not defend: an owner who hands an agent the keystore passphrase (the
 * owner's key handed over, as for every owner command).
 */
import type { Command } from 'commander';
import type { WalletPolicy } from '../../../../policy/policy-schema.js';
import {
  walletPolicySchema as walletPolicyReplySchema,
  type WalletPolicy as WalletPolicyReply,
} from '../../../shared/api-responses/pay-responses.js';
import { describeAuthority, describeOwnerPolicy } from '../../../shared/describe-owner-policy.js';
import type { WalletView } from '../../../shared/api-responses/wallet-responses.js';
import type { BearerFlags } from '../../core/buyer-bearer.js';
import type { CliContext } from '../../core/cli-context.js';
import { formatFields } from '../seller/seller-format.js';
import { act, badArgument, type ContextOf } from '../seller/seller-kit.js';
import { capArgument, checkedPolicy, describePolicy, readPolicyFile } from './init-defaults.js';
import { withOwnerSession } from './owner-sign-in.js';
import { putOwnerSignedPolicy } from './owner-signed-policy.js';
import { provenPolicyCopy } from './policy-copy.js';
import { recordSetDocument } from './signed-policy-record.js';
import { targetWallet } from './target-wallet.js';
import { verifyWalletPolicy, type PolicyVerifyOptions } from './wallet-policy-verify.js';

export const PROFILE_FLAG = 'a credentials profile instead of XX_PAT / the active profile / the active agent';

export interface PolicySetOptions extends BearerFlags {
  file?: string;
  maxPerPayment?: string;
  dailyLimit?: string;
  keyDestruction?: string;
}

/** `--key-destruction allow` sets `allow_key_destruction: true`, `refuse` removes it (the field is stored only when true). */
function keyDestructionArgument(raw: string): boolean {
  const value = raw.trim().toLowerCase();
  if (value === 'allow' || value === 'refuse') return value === 'allow';
  throw badArgument('--key-destruction', `allow or refuse, got "${raw}"`);
}

/**
 * The policy `set` signs: `--file`'s (else the current one) with the per-rule flags applied, checked. The
 * flags are checked first: `current` may be a reader (./policy-copy.ts), asked only without `--file`.
 */
export function policyFromFlags(
  current: Record<string, unknown> | (() => Record<string, unknown>),
  opts: PolicySetOptions,
): WalletPolicy {
  if (
    opts.file === undefined &&
    opts.maxPerPayment === undefined &&
    opts.dailyLimit === undefined &&
    opts.keyDestruction === undefined
  )
    throw badArgument('--file', 'give --file <policy.json>, --max-per-payment, --daily-limit or --key-destruction');
  const edits: [field: string, value: unknown][] = [];
  for (const [flag, raw, field] of [
    ['--max-per-payment', opts.maxPerPayment, 'per_tx_cap_usd'],
    ['--daily-limit', opts.dailyLimit, 'daily_cap_usd'],
  ] as const) {
    if (raw !== undefined) edits.push([field, capArgument(flag, raw)]);
  }
  if (opts.keyDestruction !== undefined)
    edits.push(['allow_key_destruction', keyDestructionArgument(opts.keyDestruction) ? true : null]);
  const draft: Record<string, unknown> = {
    ...((opts.file !== undefined
      ? readPolicyFile('--file', opts.file)
      : typeof current === 'function'
        ? current()
        : current) as Record<string, unknown>),
  };
  // null removes the rule (`none`, `refuse`): a cap and the flag are stored only when set.
  for (const [field, value] of edits) {
    if (value === null) delete draft[field];
    else draft[field] = value;
  }
  return checkedPolicy(opts.file !== undefined ? '--file' : '--max-per-payment', draft);
}

function report(ctx: CliContext, wallet: WalletView, held: WalletPolicyReply, notice?: string): void {
  const owner = held.owner_policy;
  ctx.out(
    { wallet_id: held.wallet_id, address: wallet.address, policy: held.policy, owner_policy: owner },
    [
      ...(notice ? [notice] : []),
      formatFields([
        ['wallet', `${wallet.id} ${wallet.address}`],
        ['policy', describePolicy(held.policy)],
        ['owner-signed', describeOwnerPolicy(owner)],
        ['authority', describeAuthority(owner.authority)],
        ['next version', String(owner.next_version)],
      ]),
      JSON.stringify(held.policy, null, 2),
    ].join('\n'),
  );
}

async function show(ctx: CliContext, ref: string | undefined, flags: BearerFlags): Promise<void> {
  const { client, wallet } = await targetWallet(ctx, flags, ref);
  const held = await ctx.spin('Reading the policy', () =>
    client.request('GET', `/v1/wallets/${wallet.id}/policy`, { reply: walletPolicyReplySchema }),
  );
  report(ctx, wallet, held);
}

async function set(ctx: CliContext, ref: string | undefined, opts: PolicySetOptions): Promise<void> {
  const { client, wallet } = await targetWallet(ctx, opts, ref);
  const current = await ctx.spin('Reading the policy', () =>
    client.request('GET', `/v1/wallets/${wallet.id}/policy`, { reply: walletPolicyReplySchema }),
  );
  const policy = policyFromFlags(() => provenPolicyCopy(current), opts);
  const held = await withOwnerSession(ctx, '`xx wallet policy set`', (owner, _grant, seed) =>
    ctx.spin('Signing the policy', () =>
      putOwnerSignedPolicy(owner, seed, wallet, policy, (document) =>
        recordSetDocument(ctx.paths, wallet.id, document),
      ),
    ),
  );
  report(ctx, wallet, held, `Signed and set the policy of ${wallet.id} (version ${held.owner_policy.version ?? '?'}).`);
}

/** `policy show`, `policy set` and `policy verify` (./wallet-policy-verify.ts) under `xx wallet`. */
export function registerWalletPolicyCommands(wallet: Command, contextOf: ContextOf): void {
  const policy = wallet
    .command('policy')
    .description("A managed wallet's policy: shown, signed by the owner's seed and set, or verified at the signer");
  policy
    .command('show [wallet]')
    .description("The wallet's policy and whether the signer holds it owner-signed (default: the agent's first)")
    .option('--profile <name>', PROFILE_FLAG)
    .action(act(contextOf, (ctx, o: BearerFlags, [ref]) => show(ctx, ref, o)));
  policy
    .command('set [wallet]')
    .description("Sign a new policy with the seed's key and set it (default: the agent's first wallet)")
    .option('--file <policy.json>', 'the whole policy, as JSON (else the current one is changed)')
    .option('--max-per-payment <usd|none>', 'the per-payment cap (none: no cap)')
    .option('--daily-limit <usd|none>', 'the daily cap (none: no cap)')
    .option(
      '--key-destruction <allow|refuse>',
      "whether a rotation or revocation may destroy the wallet's key (allow_key_destruction)",
    )
    .option('--profile <name>', PROFILE_FLAG)
    .action(act(contextOf, (ctx, o: PolicySetOptions, [ref]) => set(ctx, ref, o)));
  policy
    .command('verify [wallet]')
    .description(
      "Check, by a receipt signed with the wallet's own key, that the signer holds the last policy signed here",
    )
    .option(
      '--address <address>',
      'the wallet address (0x… or Solana base58) named in the policy you signed (default: the one recorded here)',
    )
    .option(
      '--expect-version <n>',
      'compare with the version you signed (e.g. in the dashboard) instead of the last one signed here',
    )
    .option('--expect-hash <0x…>', 'with --expect-version: the policy hash you signed at that version')
    .option('--profile <name>', PROFILE_FLAG)
    .action(act(contextOf, (ctx, o: PolicyVerifyOptions, [ref]) => verifyWalletPolicy(ctx, ref, o)));
}
