/**
 * `xx wallet rotate <wal_…>` and `xx wallet revoke <wal_…>` (docs/cli.md, "Owner-signed policies"): a managed
 * wallet gets a new key and address (same id, history kept), or ends; either way its old key is destroyed
 * (POST /v1/wallets/{id}/rotate | revoke). They ask first (or `--yes` without a TTY), read the wallet with the
 * agent's credentials (as `xx wallet policy` does: its account), then sign the owner in with the seed and call
 * the route with a Treasury PAT of that account minted for the call and revoked after (./owner-signed-policy.ts). `--abandon-balance` says to destroy a key whose address holds USDC, or whose
 * balance cannot be read (else 409 `wallet_has_balance` / `balance_unknown`).
 *
 * Under an owner-signed policy the key is destroyed only when that policy carries `allow_key_destruction: true`;
 * the API refuses otherwise (409 `key_destruction_not_allowed`), and the error carries the command that signs
 * a policy allowing it as its next step (`recovery.cli_command`).
 *
 * Defends: an agent retiring its own wallet — the routes take a Treasury bearer, minted here only by the owner's
 * fresh sign-in with the seed; a key destroyed by a slip (a confirmation first, the wallet named by id, never a
 * default). Does not defend: USDC left at the address with `--abandon-balance` (lost for good, as asked).
 */
import type { Command } from 'commander';
import { walletViewSchema, type WalletView } from '../../../shared/api-responses/wallet-responses.js';
import type { CliContext } from '../../core/cli-context.js';
import { CliError } from '../../core/cli-error.js';
import type { BearerFlags } from '../../core/buyer-bearer.js';
import { act, badArgument, type ContextOf } from '../seller/seller-kit.js';
import { withOwnerSession } from './owner-sign-in.js';
import { withTreasuryBearer } from './owner-signed-policy.js';
import { targetWallet } from './target-wallet.js';
import { PROFILE_FLAG } from './wallet-policy-commands.js';

const WALLET_ID = /^wal_[0-9a-f]{24}$/;

type Retirement = 'rotate' | 'revoke';

interface RetireOptions extends BearerFlags {
  abandonBalance?: boolean;
  yes?: boolean;
}

/** The command that signs a policy allowing the key's destruction (on the current policy, the copy checked). */
export function allowKeyDestructionCommand(walletId: string): string {
  return `xx wallet policy set ${walletId} --key-destruction allow`;
}

/** A 409 `key_destruction_not_allowed` with that command as its next step; any other error as it is. */
export function withKeyDestructionHint(err: unknown, walletId: string): unknown {
  if (!(err instanceof CliError) || err.code !== 'key_destruction_not_allowed') return err;
  return new CliError({
    code: err.code,
    userMessage: err.userMessage,
    status: err.status,
    details: Object.keys(err.details).length > 0 ? err.details : undefined,
    recovery: { kind: 'allow_key_destruction', cli_command: allowKeyDestructionCommand(walletId) },
    cause: err,
  });
}

function said(what: Retirement, wallet: WalletView): string {
  if (what === 'revoke') return `Revoked ${wallet.id}; its key is destroyed.`;
  return [
    `Rotated ${wallet.id}: new address ${wallet.address} (key version ${wallet.key_version}); the old key is destroyed.`,
    ...(wallet.policy_state === 'ceilings_only'
      ? [
          `The new address holds no owner-signed policy yet; sign one with \`xx wallet policy set ${wallet.id} --file <policy.json>\`.`,
        ]
      : []),
  ].join('\n');
}

async function retire(ctx: CliContext, what: Retirement, walletId: string, opts: RetireOptions): Promise<void> {
  if (!WALLET_ID.test(walletId)) throw badArgument('<wallet>', 'a managed wallet id (wal_…)');
  const question =
    what === 'rotate'
      ? `Rotate ${walletId}? Its current key is destroyed; USDC left at its address is lost.`
      : `Revoke ${walletId}? The wallet ends and its key is destroyed; USDC left at its address is lost.`;
  if (!opts.yes && !(await ctx.prompt.confirm({ message: question, flag: '--yes' })))
    throw new CliError({ code: 'cancelled', userMessage: 'Nothing changed.' });
  const { wallet: target } = await targetWallet(ctx, opts, walletId);
  const wallet = await withOwnerSession(ctx, `\`xx wallet ${what}\``, (owner) =>
    ctx.spin(what === 'rotate' ? 'Rotating the key' : 'Revoking the wallet', () =>
      withTreasuryBearer(
        owner,
        target.account_id,
        (treasury) =>
          treasury.request('POST', `/v1/wallets/${walletId}/${what}`, {
            body: opts.abandonBalance ? { abandon_balance: true } : {},
            reply: walletViewSchema,
          }),
        `xx wallet ${what}`,
      ),
    ),
  ).catch((err: unknown) => {
    throw withKeyDestructionHint(err, walletId);
  });
  ctx.out(wallet, said(what, wallet));
}

/** `rotate` and `revoke` under `xx wallet`. */
export function registerWalletRetireCommands(wallet: Command, contextOf: ContextOf): void {
  for (const [what, description] of [
    ['rotate', 'Give a managed wallet a new key and address (the owner signs in; the old key is destroyed)'],
    ['revoke', 'End a managed wallet (the owner signs in; its key is destroyed)'],
  ] as const) {
    wallet
      .command(`${what} <wallet>`)
      .description(description)
      .option('--abandon-balance', 'destroy the key even if its address holds USDC or its balance cannot be read')
      .option('--yes', 'confirm without a prompt')
      .option('--profile <name>', PROFILE_FLAG)
      .action(act(contextOf, (ctx, o: RetireOptions, [id]) => retire(ctx, what, id ?? '', o)));
  }
}
