/**
 * `xx buy <url>`: the x402 exchange through the buyer SDK with the active agent's Treasury wallet, or with
 * `--self-custody` the keystore's own Base or Solana key (./self-custody.ts). `--network <chain|CAIP-2>`
 * (./network-argument.ts) pays only on that network (a managed buyer uses the agent's wallet on it).
 * `--method`, `--body` (inline JSON or `@file`), `--header k:v` (repeatable) (./buy-request.ts), `--max <USD>`
 * (the price cap; refused above it, never raised), `--timeout <seconds>` (the whole exchange with the seller:
 * ./seller-timeout.ts). Prints the body; under `--json` `{status, paid, network, body, receipt}`, and
 * for an `upto` payment `settlement` (signed maximum, settled, given back; null with `settlement_error` when
 * Treasury could not record it). `receipt` (present when the seller sent one) says what was signed, not what the
 * seller's receipt claims (the SDK's `summarizePayment`): `network` the network signed for, `amount`/`amount_raw`
 * the accepted price (an `upto` payment's settled amount once Treasury verified it), `payer` the address that
 * signed, and `txHash` the receipt's transaction only when it has a transaction's shape on that network (0x + 64
 * hex; a Solana signature: base58 of 64 bytes), else null. An EVM `exact` payment's settlement is
 * reported too (waited for briefly: ./settlement-report.ts), so `xx history` shows it settled; under `--json`
 * the same `settlement` (nothing given back) or `settlement_error`. SDK errors map to the buyer SDK's
 * error names (docs/buyer-sdk.md); MGMT_6014 shows the server's user_message unchanged with its settings_url.
 * The same command line retried is the same purchase (./buy-purchases.ts): its stored x402 payment identifier
 * and signed payment are sent again, never signed again; `--new-purchase` starts another.
 *
 * Defends: a seller's receipt passing for the payment (see `receipt`), and a seller's words — a refusal reason,
 * a challenge the SDK could not read — rewriting the terminal: they reach the `Error:` line and the "Paid …"
 * line through the CLI's `printable` (control characters blanked). Does not: the body bought is printed as the
 * seller sent it (it is the content asked for, as with curl); `--json` escapes everything.
 */
import type { Command } from 'commander';
import {
  createX402Buyer,
  InsufficientBudgetError,
  InsufficientFundsError,
  NoCompatibleAcceptError,
  PatCapReachedError,
  PaymentRejectedError,
  PurchaseTermsChangedError,
  ReauthenticateError,
  SellerTimeoutError,
  TreasuryApiError,
  TreasuryClient,
  TreasurySdkError,
  summarizePayment,
  X402PaymentFailedError,
  type X402Result,
} from '../../../sdk/index.js';
import { buyPurchaseKey, cliPurchaseStore, purchaseTermsChanged } from './buy-purchases.js';
import type { CliContext } from '../../core/cli-context.js';
import { CliError, REAUTHENTICATE_RECOVERY } from '../../core/cli-error.js';
import { printable } from '../../core/run-command.js';
import { requireBuyerBearer } from '../../core/buyer-bearer.js';
import { resolveBuyWallet } from './resolve-buy-wallet.js';
import { networkArgument } from './network-argument.js';
import { capabilitySchema } from '../../../sdk/treasury-client-schemas.js';
import { buyCeiling, DEFAULT_BUY_MAX_USD, type BuyCeiling } from './buy-ceiling.js';
import { selfCustodyBuyer, type SelfCustodyOptions } from './self-custody.js';
import { parseHeaders, readBody } from './buy-request.js';
import { awaitSettlementReport, settlementWaitMs } from './settlement-report.js';
import { sellerTimeoutError, sellerTimeoutMs } from './seller-timeout.js';
import { act, badArgument, collect, HTTP_METHODS, httpUrlArgument, type ContextOf } from '../seller/seller-kit.js';

interface BuyOptions {
  method?: string;
  body?: string;
  header?: string[];
  max?: string;
  wallet?: string;
  selfCustody?: boolean;
  keystore?: string;
  profile?: string;
  network?: string;
  capability?: string;
  newPurchase?: boolean;
  settlementWait?: string;
  timeout?: string;
}

/** SDK errors → CLI errors with the buyer SDK's error names (docs/buyer-sdk.md) as codes. */
export function mapBuyError(err: unknown): unknown {
  if (err instanceof InsufficientBudgetError) {
    return new CliError({
      code: 'InsufficientBudgetError',
      userMessage: `The price ${err.requested_usd} USD is above your --max of ${err.cap_usd} USD; nothing was paid.`,
      details: { requested_usd: err.requested_usd, cap_usd: err.cap_usd },
      recovery: { ...err.recovery },
    });
  }
  if (err instanceof NoCompatibleAcceptError) {
    return new CliError({
      code: 'NoCompatibleAcceptError',
      userMessage: `None of the seller's payment options can be paid by this wallet (offered: ${err.recovery.offered_networks.join(', ')}${err.recovery.payable_networks.length > 0 ? `; this wallet pays on ${err.recovery.payable_networks.join(', ')}` : ''}).`,
      details: { accepts: err.accepts },
      recovery: { ...err.recovery },
    });
  }
  if (err instanceof PaymentRejectedError) {
    return new CliError({
      code: 'PaymentRejectedError',
      userMessage: `The payment settled but the seller answered HTTP ${err.status_code}. Settlement is irreversible; contact the seller.`,
      details: { status_code: err.status_code, body: err.body.slice(0, 2000), receipt: err.receipt },
    });
  }
  if (err instanceof PatCapReachedError) {
    // The server's recovery unchanged, plus the command that raises the cap from here (the PAT id ends its settings_url).
    const patId = /\/(pat_[0-9a-f]{24})$/.exec(err.settingsUrl ?? '')?.[1];
    return new CliError({
      code: 'MGMT_6014',
      userMessage: err.userMessage,
      status: 429,
      recovery: { ...err.recovery, ...(patId ? { cli_command: `xx pat update ${patId} --daily-cap <usd>` } : {}) },
    });
  }
  if (err instanceof ReauthenticateError)
    return new CliError({
      code: 'reauthenticate',
      userMessage: err.userMessage,
      status: 401,
      recovery: { ...REAUTHENTICATE_RECOVERY },
    });
  if (err instanceof InsufficientFundsError) {
    // On the test network the sandbox faucet can fund the wallet (xx fund --testnet).
    const fund = err.recovery.chain === 'eip155:84532' ? { cli_command: 'xx fund --testnet' } : {};
    return new CliError({
      code: 'insufficient_funds',
      userMessage: err.message,
      recovery: { ...err.recovery, ...fund },
      details: {
        address: err.wallet.address,
        balance_usd: err.wallet.balance_usd,
        seller_reason: err.paymentFailure.reason,
      },
    });
  }
  if (err instanceof PurchaseTermsChangedError) return purchaseTermsChanged(err);
  // The messages below carry the seller's words (its reason, a challenge that failed to parse): one printable line.
  if (err instanceof X402PaymentFailedError)
    return new CliError({
      code: 'payment_failed',
      userMessage: printable(err.message),
      details: { status_code: err.status_code, reason: err.reason },
    });
  if (err instanceof TreasuryApiError) {
    return new CliError({
      code: err.code,
      userMessage: err.userMessage,
      status: err.status,
      recovery: err.recovery as Record<string, unknown> | undefined,
      details: err.decisionId ? { decision_id: err.decisionId } : undefined,
    });
  }
  if (err instanceof TreasurySdkError) return new CliError({ code: err.code, userMessage: printable(err.message) });
  if (err instanceof TypeError)
    return new CliError({
      code: 'network_error',
      userMessage: printable(`The request failed: ${err.cause instanceof Error ? err.cause.message : err.message}`),
    });
  return err;
}

/**
 * The active agent's managed wallet (`--wallet`, else the first on `--network`, else the first) and a buyer
 * that pays from it (on `--network` only, when named).
 */
async function managedBuyer(
  ctx: CliContext,
  opts: BuyOptions,
  { maxPriceUsd: max, network, purchases, sellerTimeoutMs }: Omit<SelfCustodyOptions, 'keystore'>,
) {
  const bearer = requireBuyerBearer(ctx, opts);
  const client = new TreasuryClient({ apiUrl: bearer.server, token: bearer.token });
  let wallet;
  try {
    wallet = await resolveBuyWallet(client, bearer.agent?.wallets ?? [], opts.wallet, ctx.dashboardUrl(), network);
  } catch (err) {
    throw mapBuyError(err);
  }
  const buyer = createX402Buyer({
    client,
    walletId: wallet.id,
    ...(opts.capability ? { capability: capabilityArgument(opts.capability) } : {}),
    ...(max ? { maxPriceUsd: max } : {}),
    ...(network ? { network } : {}),
    purchases,
    sellerTimeoutMs,
  });
  return { buyer, address: wallet.address, payerId: wallet.id, mapError: (err: unknown) => err };
}

/** `--capability`: the API's capability spelling (lower-case letters, digits and . _ : - /), exit 2 otherwise. */
function capabilityArgument(raw: string): string {
  const parsed = capabilitySchema.safeParse(raw);
  if (!parsed.success)
    throw badArgument('--capability', 'lower-case letters, digits and . _ : - /, 1 to 128 characters');
  return parsed.data;
}

/** A price over a ceiling `--max` did not set says which one refused it and how to pay more. */
function withCeilingSource(err: unknown, ceiling: BuyCeiling): unknown {
  if (!(err instanceof CliError) || err.code !== 'InsufficientBudgetError' || ceiling.source === '--max') return err;
  const where =
    ceiling.source === 'default'
      ? 'the default ceiling'
      : ceiling.source === 'profile'
        ? "the profile's ceiling (xx login --buy-max)"
        : 'XX_BUY_MAX_USD';
  return new CliError({
    code: err.code,
    userMessage: `${err.userMessage.replace(/your --max of ([0-9.]+) USD/, `${where} of $1 USD`)} Pass --max <usd> to pay more.`,
    details: { ...err.details, ceiling_source: ceiling.source },
    ...(err.recovery ? { recovery: err.recovery } : {}),
  });
}

/**
 * `--json`'s answer of a buy: status, paid, network, body (JSON when it parses), receipt and an upto settlement.
 * The receipt's fields are what was signed, by `payer` (see the header), not the seller's receipt.
 */
function buyOutput(result: X402Result, payer: string) {
  let parsedBody: unknown = result.body;
  try {
    parsedBody = JSON.parse(result.body);
  } catch {
    // not JSON: keep the text
  }
  const paid = summarizePayment(result);
  const receipt =
    result.receipt && paid
      ? {
          txHash: paid.transaction,
          payer,
          network: paid.network,
          amount: paid.amount_usd,
          amount_raw: paid.amount_raw,
        }
      : null;
  // An `upto` payment: what Treasury recorded of its settlement (the unsettled part of the maximum given back).
  const settlement = result.settlement
    ? {
        transaction: result.settlement.transaction,
        signed_max: result.settlement.signed_max_usd,
        settled: result.settlement.settled_usd,
        given_back: result.settlement.given_back_usd,
      }
    : null;
  const data = {
    status: result.status,
    paid: result.paid,
    network: result.network ?? null,
    body: parsedBody,
    receipt,
    ...(result.payment?.scheme === 'upto' || result.settlementReport
      ? { settlement, ...(result.settlementError ? { settlement_error: result.settlementError } : {}) }
      : {}),
  };
  return { data, receipt, settlement };
}

/** The options of one kind of payer only: `--keystore` with `--self-custody`, `--capability` and `--wallet` without. */
function checkPayerArguments(opts: BuyOptions): void {
  if (!opts.selfCustody && opts.keystore !== undefined) throw badArgument('--keystore', 'only with --self-custody');
  if (opts.selfCustody && opts.capability !== undefined)
    throw badArgument('--capability', 'names what a managed wallet pays for; --self-custody has no policy to match');
  if (opts.selfCustody && opts.wallet !== undefined)
    throw badArgument('--wallet', 'names a managed wallet; --self-custody pays from the keystore');
}

async function buy(ctx: CliContext, url: string, opts: BuyOptions): Promise<void> {
  const target = httpUrlArgument('<url>', url, 'expected an http(s) URL');
  const method = (opts.method ?? 'GET').toUpperCase();
  if (!(HTTP_METHODS as readonly string[]).includes(method))
    throw badArgument('--method', `one of ${HTTP_METHODS.join(', ')}`);
  const body = readBody(opts.body);
  const headers = {
    ...parseHeaders(opts.header),
    ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
  };
  const ceiling = buyCeiling(ctx, opts);
  const max = ceiling.max_usd;
  checkPayerArguments(opts);
  const network = networkArgument('--network', opts.network, ctx.apiUrl());
  const waitMs = settlementWaitMs(opts.settlementWait);
  const timeoutMs = sellerTimeoutMs(opts.timeout);
  const purchases = cliPurchaseStore(ctx);
  // --self-custody: the keystore's own keys sign (./self-custody.ts); otherwise a managed wallet.
  const payerOptions = { maxPriceUsd: max, network, purchases, sellerTimeoutMs: timeoutMs };
  const payer = opts.selfCustody
    ? await selfCustodyBuyer(ctx, { keystore: opts.keystore ?? 'default', ...payerOptions })
    : await managedBuyer(ctx, opts, payerOptions);
  const { buyer } = payer;
  const wallet = { address: payer.address };
  // The same command line is the same purchase (./buy-purchases.ts): a retry sends its stored payment.
  const purchaseKey = buyPurchaseKey({
    method,
    url: target.toString(),
    body,
    network,
    payer: 'payerId' in payer ? `managed:${payer.payerId}` : `self:${payer.address}`,
  });
  let result;
  try {
    if (opts.newPurchase) await purchases.delete(purchaseKey);
    result = await ctx.spin(`${method} ${target.host}${target.pathname}`, () =>
      buyer.request(target.toString(), {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
        purchaseKey,
      }),
    );
  } catch (err) {
    if (err instanceof SellerTimeoutError) throw sellerTimeoutError(timeoutMs, target.host);
    throw payer.mapError(withCeilingSource(mapBuyError(err), ceiling));
  }
  result = await awaitSettlementReport(result, waitMs);
  const { data, receipt, settlement } = buyOutput(result, result.localPayment?.payer ?? wallet.address);
  if (result.status >= 400) {
    throw new CliError({
      code: 'request_failed',
      userMessage: `The seller answered HTTP ${result.status}${result.paid ? '' : ' (nothing was paid)'}.`,
      status: result.status,
      details: { body: result.body.slice(0, 2000) },
    });
  }
  ctx.out(data, result.body);
  // Each line as printable text: the figures are signed or Treasury's, and a line never carries control characters.
  const info = (line: string) => ctx.info(printable(line));
  if (receipt)
    info(
      `Paid ${receipt.amount} USD from ${receipt.payer} on ${receipt.network}${receipt.txHash ? ` (tx ${receipt.txHash})` : ''}.`,
    );
  if (settlement && result.payment?.scheme !== 'upto')
    info(`Treasury verified the settlement on chain (tx ${settlement.transaction}): xx history shows it settled.`);
  else if (settlement)
    info(
      `Settled ${settlement.settled} of the ${settlement.signed_max} USD maximum; ${settlement.given_back} USD given back to the wallet's caps.`,
    );
  else if (result.settlementError && result.payment?.scheme !== 'upto')
    info(
      `The settlement was not recorded yet (${result.settlementError}); the payment stands, but xx history shows it signed until it is.`,
    );
  else if (result.settlementError)
    info(
      `The settlement was not recorded (${result.settlementError}): the wallet's caps still count the signed maximum.`,
    );
}

export function registerBuyCommand(program: Command, contextOf: ContextOf): void {
  program
    .command('buy <url>')
    .description("Run the x402 exchange with the agent's Treasury wallet (credentials: see xx --help)")
    .option('--method <method>', 'HTTP method', 'GET')
    .option('--body <json>', 'request body: inline JSON or @file')
    .option('--header <name:value>', 'extra request header (repeatable)', collect)
    .option(
      '--capability <name>',
      "what the payment is for (e.g. search.web), matched against the wallet policy's capability caps",
    )
    .option(
      '--max <usd>',
      `highest price to pay, in USD (default: XX_BUY_MAX_USD, the profile's buy_max_usd, else ${DEFAULT_BUY_MAX_USD})`,
    )
    .option(
      '--wallet <id>',
      'managed wallet id or address (default the first; one not stored locally is looked up on the server)',
    )
    .option(
      '--network <chain>',
      'pay only on this network: base, base-sepolia, solana, solana-devnet or a CAIP-2 id (managed: the wallet on it)',
    )
    .option(
      '--self-custody',
      "pay from the keystore's own Base or Solana address (the seed you hold) instead of a managed wallet",
    )
    .option('--keystore <name>', 'with --self-custody: the keystore to pay from (default: default)')
    .option(
      '--new-purchase',
      'a new purchase even if the same buy (method, URL, body, network, wallet) is still unsettled (default: resume it)',
    )
    .option('--settlement-wait <seconds>', "how long to wait for the payment's settlement report (0-120, default 30)")
    .option('--timeout <seconds>', 'how long the exchange with the seller may take in all (1-600, default 120)')
    .option('--profile <name>', 'a credentials profile instead of XX_PAT / the active profile / the active agent')
    .action(act(contextOf, (ctx, opts: BuyOptions, [url]) => buy(ctx, url!, opts)));
}
