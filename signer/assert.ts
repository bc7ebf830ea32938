/**
 * Small named assertions (noble's `abytes` style: they name the bad argument) and the static invariants
 * the signer re-checks on every signature, whatever the front decided:
 *   allowed_token   (domain.chainId, domain.verifyingContract) is on the allow-list (address case-insensitive)
 *   from_is_wallet  message.from is the wallet address the request names
 *   value_positive  0 < value
 *   value_max       value ≤ TREASURY_SIGNER_MAX_PER_SIGNATURE (the `per_signature` limit; older name TREASURY_SIGNER_MAX_VALUE)
 *   window_ordered  validAfter < validBefore
 *   window_open     validBefore > now
 *   window_max      validBefore − max(validAfter, now) ≤ TREASURY_SIGNER_MAX_VALIDITY_SECONDS
 *   window_starts_soon  validAfter ≤ now + VALID_AFTER_MAX_AHEAD_SECONDS (300 s of clock skew): the API asks
 *                   for windows open now, so one that opens later is a signature kept for later use
 * and for a Permit2 witness transfer (x402 `upto`) the same token, value and window rules on
 * permitted.token / permitted.amount / witness.validAfter..deadline, plus
 *   permit2_contract  domain.verifyingContract is the configured Permit2 (TREASURY_SIGNER_PERMIT2_ADDRESS)
 *   allowed_spender   spender is on TREASURY_SIGNER_PERMIT2_SPENDERS (default: the x402 upto proxy only)
 * and for an EIP-2612 permit (x402 `eip2612GasSponsoring`) the same token and value rules, plus
 *   owner_is_wallet         message.owner is the wallet address the request names
 *   permit_spender_permit2  spender is the configured Permit2 (TREASURY_SIGNER_PERMIT2_ADDRESS, canonical by
 *                           default) and nothing else: a permit to any other spender would let it pull the
 *                           wallet's tokens outside every Permit2 signature the signer counts
 *   window_open / window_max  now < deadline ≤ now + TREASURY_SIGNER_MAX_VALIDITY_SECONDS
 * (A Solana message's rules are ./solana/solana-rule.ts; its amount passes value_positive and value_max here.)
 * A violation throws `invariant_violation` naming the rule as a field (`details.rule`) and at the start of
 * its message. Addresses
 * must carry a correct EIP-55 checksum when mixed-case (`aaddress`, `invalid_request` otherwise).
 *
 * Protects against: a compromised or buggy front asking for a signature on another chain or token, for
 * another address, for an absurd value, or one that stays valid for months — or that becomes valid months
 * from now (signatures stockpiled today would outlive any later tightening of the signer's limits).
 * Known limits: spend policy (caps, velocity, counterparties) is the front's job, under its lock (the
 * signer's own rolling ceilings per wallet are ./limits/wallet-limiter.ts); the
 * EIP-712 domain name/version are not checked here (a wrong name only yields a useless signature).
 */
import type {
  Eip2612Permit,
  Eip712Domain,
  Permit2Domain,
  Permit2WitnessTransfer,
  SignerErrorDetails,
  TransferWithAuthorization,
} from './protocol/signer-protocol.js';
import type { SignerInvariants } from './config/signer-config.js';
import { getAddress } from 'viem';
import { SignerFault } from './signer-error.js';

export type InvariantRule =
  | 'allowed_token'
  | 'from_is_wallet'
  | 'value_positive'
  | 'value_max'
  | 'window_ordered'
  | 'window_open'
  | 'window_max'
  | 'window_starts_soon'
  | 'permit2_contract'
  | 'allowed_spender'
  | 'owner_is_wallet'
  | 'permit_spender_permit2';

/** Throws `invariant_violation` naming `rule` in the message and as a field (`details.rule`, plus any `details`). */
export function invariant(
  condition: boolean,
  rule: InvariantRule,
  message: string,
  details: Omit<SignerErrorDetails, 'rule'> = {},
): asserts condition {
  if (!condition) throw new SignerFault('invariant_violation', `${rule}: ${message}`, { rule, ...details });
}

/** Asserts `value` is a Uint8Array of exactly `length` bytes, naming the argument when it is not. */
export function abytes(value: Uint8Array, length: number, name: string): void {
  if (!(value instanceof Uint8Array) || value.length !== length) {
    throw new SignerFault(
      'invalid_request',
      `${name} must be ${length} bytes, got ${value instanceof Uint8Array ? value.length : typeof value}`,
    );
  }
}

/**
 * Asserts a 0x-prefixed 40-hex address (already schema-checked) carries a correct EIP-55 checksum when it
 * is mixed-case; all-lower and all-upper spellings carry none and are accepted.
 */
export function aaddress(value: string, name: string): void {
  const hex = value.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return;
  if (checksummed.has(value)) return;
  if (getAddress(value) !== value) throw new SignerFault('invalid_request', `${name} has a wrong EIP-55 checksum`);
  if (checksummed.size >= MAX_CHECKSUMMED) checksummed.clear();
  checksummed.add(value);
}

/** Mixed-case spellings already found correct (wallets, payees and tokens recur): a keccak each saved. */
const checksummed = new Set<string>();
const MAX_CHECKSUMMED = 100_000;

function assertToken(invariants: SignerInvariants, chainId: number, token: string): void {
  const contract = token.toLowerCase();
  invariant(
    invariants.allowedTokens.some((t) => t.chainId === chainId && t.address === contract),
    'allowed_token',
    `token ${token} on chain ${chainId} is not allowed`,
  );
}

/** 0 < value ≤ the per-signature maximum (`value_positive`, `value_max`): every signing method's amount rule. */
export function assertValue(invariants: SignerInvariants, raw: string): void {
  const value = BigInt(raw);
  invariant(value > 0n, 'value_positive', 'value must be positive');
  invariant(value <= invariants.maxValue, 'value_max', `value exceeds the signer maximum of ${invariants.maxValue}`, {
    limit: 'per_signature',
    max: String(invariants.maxValue),
  });
}

/**
 * How far ahead of the signer's clock a validity window may open: clock skew between the front and the signer
 * (the front asks for windows open now; the owner-signed policies allow their documents the same 300 s).
 */
export const VALID_AFTER_MAX_AHEAD_SECONDS = 300;

/** A validity window (`window_ordered`, `window_open`, `window_max`, `window_starts_soon`, in that order). */
function assertWindow(
  invariants: SignerInvariants,
  validAfterRaw: string,
  validBeforeRaw: string,
  nowSeconds: number,
): void {
  const validAfter = BigInt(validAfterRaw);
  const validBefore = BigInt(validBeforeRaw);
  const now = BigInt(nowSeconds);
  invariant(validAfter < validBefore, 'window_ordered', 'validAfter must be before validBefore');
  invariant(validBefore > now, 'window_open', 'validBefore is in the past');
  const start = validAfter > now ? validAfter : now;
  invariant(
    validBefore - start <= BigInt(invariants.maxValiditySeconds),
    'window_max',
    `validity window exceeds ${invariants.maxValiditySeconds} s`,
  );
  invariant(
    validAfter <= now + BigInt(VALID_AFTER_MAX_AHEAD_SECONDS),
    'window_starts_soon',
    `validAfter is more than ${VALID_AFTER_MAX_AHEAD_SECONDS} s ahead`,
  );
}

export function assertTransferInvariants(
  invariants: SignerInvariants,
  address: string,
  domain: Eip712Domain,
  message: TransferWithAuthorization,
  nowSeconds: number,
): void {
  assertToken(invariants, domain.chainId, domain.verifyingContract);
  invariant(
    message.from.toLowerCase() === address.toLowerCase(),
    'from_is_wallet',
    'message.from must be the wallet address',
  );
  assertValue(invariants, message.value);
  assertWindow(invariants, message.validAfter, message.validBefore, nowSeconds);
}

/** A Permit2 witness transfer: the owner is the wallet itself (the signature must recover to it). */
export function assertPermit2Invariants(
  invariants: SignerInvariants,
  domain: Permit2Domain,
  message: Permit2WitnessTransfer,
  nowSeconds: number,
): void {
  invariant(
    domain.verifyingContract.toLowerCase() === invariants.permit2,
    'permit2_contract',
    `verifyingContract ${domain.verifyingContract} is not the configured Permit2`,
  );
  invariant(
    invariants.permit2Spenders.includes(message.spender.toLowerCase()),
    'allowed_spender',
    `spender ${message.spender} is not allowed`,
  );
  assertToken(invariants, domain.chainId, message.permitted.token);
  assertValue(invariants, message.permitted.amount);
  assertWindow(invariants, message.witness.validAfter, message.deadline, nowSeconds);
}

/**
 * An EIP-2612 permit: the wallet's own tokens, to Permit2 only, at most the per-signature maximum, with a
 * deadline in the future and no further than the longest validity window.
 */
export function assertEip2612PermitInvariants(
  invariants: SignerInvariants,
  address: string,
  domain: Eip712Domain,
  message: Eip2612Permit,
  nowSeconds: number,
): void {
  invariant(
    message.spender.toLowerCase() === invariants.permit2,
    'permit_spender_permit2',
    `spender ${message.spender} is not the configured Permit2`,
  );
  invariant(
    message.owner.toLowerCase() === address.toLowerCase(),
    'owner_is_wallet',
    'message.owner must be the wallet address',
  );
  assertToken(invariants, domain.chainId, domain.verifyingContract);
  assertValue(invariants, message.value);
  const deadline = BigInt(message.deadline);
  const now = BigInt(nowSeconds);
  invariant(deadline > now, 'window_open', 'deadline is in the past');
  invariant(
    deadline - now <= BigInt(invariants.maxValiditySeconds),
    'window_max',
    `validity window exceeds ${invariants.maxValiditySeconds} s`,
  );
}
