/**
 * `xx wallet {generate,import,list,export,delete,balance}`: self-custody seeds in encrypted keystores (one file per
 * name under the seeds directory; `default` is the one `init` uses). Only `export` shows a recovery phrase,
 * after a confirmation (or `--yes` without a TTY), and only with the passphrase. `xx wallet policy {show,set}`
 * (a managed wallet's owner-signed policy) lives in ./wallet-policy-commands.ts, `xx wallet {rotate,revoke}`
 * (a managed wallet's key destroyed) in ./wallet-retire-commands.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { CliContext } from '../../core/cli-context.js';
import { CliError } from '../../core/cli-error.js';
import { readJsonFile, writeSecretJson } from '../../core/secret-file.js';
import { formatTable } from '../seller/seller-format.js';
import { act, badArgument, type ContextOf } from '../seller/seller-kit.js';
import { addressesFor, checkMnemonic, newMnemonic } from './hd-addresses.js';
import { keystorePath, passphraseFor } from './init-command.js';
import { keystoreSchema, openMnemonic, sealMnemonic } from './seed-keystore.js';
import { walletBalance } from './self-custody-commands.js';
import { registerWalletPolicyCommands } from './wallet-policy-commands.js';
import { registerWalletRetireCommands } from './wallet-retire-commands.js';

interface NameOpts {
  name?: string;
  words?: string;
  yes?: boolean;
  force?: boolean;
}

function load(ctx: CliContext, name: string) {
  const file = keystorePath(ctx, name);
  const ks = readJsonFile(file, keystoreSchema);
  if (!ks)
    throw new CliError({
      code: 'keystore_not_found',
      userMessage: `No keystore named "${name}" (see \`xx wallet list\`).`,
    });
  return { file, ks };
}

async function store(ctx: CliContext, name: string, mnemonic: string, force: boolean | undefined): Promise<void> {
  const file = keystorePath(ctx, name);
  if (fs.existsSync(file) && !force)
    throw new CliError({
      code: 'keystore_exists',
      userMessage: `A keystore named "${name}" exists; choose another --name (or --force to replace it).`,
      exitCode: 2,
    });
  const passphrase = await passphraseFor(ctx, 'New keystore passphrase (8+ characters)');
  const sealed = await ctx.spin('Encrypting', () =>
    sealMnemonic(mnemonic, passphrase, name, addressesFor(mnemonic, 'both')),
  );
  writeSecretJson(file, sealed);
  ctx.out(
    { name, file, addresses: sealed.addresses },
    `Saved keystore "${name}" (${file}).\nBase:   ${sealed.addresses.base}\nSolana: ${sealed.addresses.solana}`,
  );
}

async function generate(ctx: CliContext, opts: NameOpts): Promise<void> {
  if (opts.words !== undefined && opts.words !== '12' && opts.words !== '24') throw badArgument('--words', '12 or 24');
  await store(ctx, opts.name ?? 'default', newMnemonic(opts.words === '12' ? 12 : 24), opts.force);
}

async function importSeed(ctx: CliContext, opts: NameOpts): Promise<void> {
  const phrase =
    process.env.XX_MNEMONIC || (await ctx.prompt.password({ message: 'Recovery phrase', flag: 'XX_MNEMONIC' }));
  await store(ctx, opts.name ?? 'default', checkMnemonic(phrase), opts.force);
}

function list(ctx: CliContext): void {
  let names: string[] = [];
  try {
    names = fs.readdirSync(ctx.paths.seedsDir).filter((n) => /^[a-z0-9][a-z0-9_-]{0,63}\.json$/.test(n));
  } catch {
    names = [];
  }
  const rows = names.flatMap((n) => {
    const ks = readJsonFile(path.join(ctx.paths.seedsDir, n), keystoreSchema);
    return ks ? [{ name: ks.name, addresses: ks.addresses, created_at: ks.created_at }] : [];
  });
  ctx.out(
    { keystores: rows },
    formatTable(
      ['name', 'base', 'solana', 'created'],
      rows.map((r) => [r.name, r.addresses.base ?? '', r.addresses.solana ?? '', r.created_at]),
      'No keystores. Create one with `xx wallet generate` or `xx init`.',
    ),
  );
}

async function exportSeed(ctx: CliContext, opts: NameOpts): Promise<void> {
  const { ks } = load(ctx, opts.name ?? 'default');
  if (
    !opts.yes &&
    !(await ctx.prompt.confirm({
      message: `Show the recovery phrase of "${ks.name}" on screen? Anyone who sees it controls the funds.`,
      flag: '--yes',
    }))
  ) {
    throw new CliError({ code: 'cancelled', userMessage: 'Nothing shown.' });
  }
  const mnemonic = await openMnemonic(ks, await passphraseFor(ctx, 'Keystore passphrase'));
  ctx.out({ name: ks.name, mnemonic, addresses: ks.addresses }, mnemonic);
}

async function remove(ctx: CliContext, opts: NameOpts): Promise<void> {
  const { file, ks } = load(ctx, opts.name ?? 'default');
  if (
    !opts.yes &&
    !(await ctx.prompt.confirm({
      message: `Delete keystore "${ks.name}"? Without a backup of its phrase the funds are lost.`,
      flag: '--yes',
    }))
  ) {
    throw new CliError({ code: 'cancelled', userMessage: 'Nothing deleted.' });
  }
  fs.rmSync(file);
  ctx.out({ name: ks.name, deleted: true }, `Deleted keystore "${ks.name}".`);
}

export function registerWalletCommands(program: Command, contextOf: ContextOf): void {
  const wallet = program.command('wallet').description('Self-custody seeds in encrypted keystores');
  // A command on one keystore: `--name` (default `default`) first, then the command's own options.
  const onKeystore = (name: string, description: string, run: (ctx: CliContext, o: NameOpts) => Promise<void>) =>
    wallet
      .command(name)
      .description(description)
      .option('--name <name>', 'keystore name', 'default')
      .action(act(contextOf, run));
  onKeystore('generate', 'Make a new seed in an encrypted keystore (prints its addresses)', generate)
    .option('--words <n>', '12 or 24', '24')
    .option('--force', 'replace an existing keystore');
  onKeystore('import', 'Import a phrase (hidden prompt or XX_MNEMONIC)', importSeed).option(
    '--force',
    'replace an existing keystore',
  );
  wallet
    .command('list')
    .description('The keystores on this machine with their addresses')
    .action(act(contextOf, async (ctx) => list(ctx)));
  wallet
    .command('balance [name]')
    .description(
      "USDC of a keystore's Base address, read on chain (default: default); a wal_… id reads that managed wallet",
    )
    .action(act(contextOf, (ctx, _o, [name]) => walletBalance(ctx, name)));
  onKeystore('export', 'Show the recovery phrase (asks first)', exportSeed).option('--yes', 'confirm without a prompt');
  onKeystore(
    'delete',
    'Delete a keystore (asks first; the funds stay on chain, reachable from the phrase)',
    remove,
  ).option('--yes', 'confirm without a prompt');
  registerWalletPolicyCommands(wallet, contextOf);
  registerWalletRetireCommands(wallet, contextOf);
}
