/**
 * From what was signed to the header of the buyer's paid retry (x402-buyer.ts): first the signed terms are
 * compared with the accepts entry chosen, then they become the x402 v2 payment payload — the EIP-3009
 * authorization (`exact`) or the Permit2 witness transfer (`upto`, with the signed EIP-2612 permit as
 * `extensions.eip2612GasSponsoring` when there is one) — encoded with the codecs of src/x402 and sent on the
 * challenge's dialect (`PAYMENT-SIGNATURE` for v2, `X-PAYMENT` for the spec's `X-PAYMENT-REQUIRED`). When the
 * 402 declares `payment-identifier`, the purchase's identifier goes in `extensions['payment-identifier'].info.id`
 * over the echoed declaration, as the official client puts it (x402-purchase.ts makes and keeps the identifier).
 *
 * A Solana payment's transaction is decoded and its transfer compared the same way (svm-exact-transfer.ts),
 * then sent as the x402 SVM payload `{ transaction }` (svm-payment-payload.ts).
 *
 * Defends against: sending a signature for other terms than the chosen entry (scheme, payee, amount, token,
 * network, and for `upto` the facilitator; on Solana also the fee payer and the payer: `SignatureMismatchError`,
 * nothing sent).
 * Does not defend against: a seller that refuses a well-formed payment (the buyer reads its answer).
 */
import { appendPaymentIdentifierToExtensions, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { encodePaymentPayload, X402_HEADERS } from '../x402/header-codec.js';
import type { PaymentRequired, PaymentRequirements } from '../x402/wire-schemas.js';
import { EIP2612_GAS_SPONSORING_KEY } from './buyer-payer.js';
import type { X402Dialect } from './read-x402-challenge.js';
import { SignatureMismatchError } from './sdk-errors.js';
import { isSvmTerms, type EvmSignedTerms, type SignedTerms, type SvmSignedTerms } from './signed-terms.js';
import { encodeSvmPaymentPayload } from './svm-payment-payload.js';
import { readSvmExactTransfer, svmTransferProblems } from './svm-exact-transfer.js';

/**
 * The signed terms must be for the entry chosen: scheme, payee, amount, token, network (for upto the
 * facilitator; for a Solana transaction also the fee payer, the payer's own source account and signature,
 * svm-exact-transfer.ts). `payer`: who should pay, when known.
 */
export async function assertSignedAsAsked(
  payment: SignedTerms,
  requirements: PaymentRequirements,
  payer?: string,
): Promise<void> {
  if (isSvmTerms(payment)) return assertSvmSignedAsAsked(payment, requirements, payer);
  const problems: string[] = [];
  const same = (x: string, y: unknown) => typeof y === 'string' && x.toLowerCase() === y.toLowerCase();
  if (payment.scheme === 'upto') {
    const a = payment.permit2_authorization;
    if (requirements.scheme !== 'upto') problems.push('scheme');
    if (!same(a.witness.to, requirements.payTo)) problems.push('payee');
    if (a.permitted.amount !== requirements.amount) problems.push('amount');
    if (!same(a.permitted.token, requirements.asset)) problems.push('token');
    if (!same(a.witness.facilitator, requirements.extra?.facilitatorAddress)) problems.push('facilitator');
  } else {
    const a = payment.authorization;
    if (requirements.scheme !== 'exact') problems.push('scheme');
    if (!same(a.to, requirements.payTo)) problems.push('payee');
    if (a.value !== requirements.amount) problems.push('amount');
  }
  if (payment.asset.toLowerCase() !== requirements.asset.toLowerCase()) problems.push('asset');
  if (payment.network !== requirements.network) problems.push('network');
  if (problems.length > 0) throw new SignatureMismatchError(problems.join(', '));
}

async function assertSvmSignedAsAsked(
  terms: SvmSignedTerms,
  requirements: PaymentRequirements,
  payer: string | undefined,
): Promise<void> {
  let problems: string[];
  try {
    problems = await svmTransferProblems(readSvmExactTransfer(terms.transaction), requirements, payer);
  } catch (err) {
    problems = [`transaction: ${err instanceof Error ? err.message : 'unreadable'}`];
  }
  if (terms.asset !== requirements.asset) problems.push('asset');
  if (terms.network !== requirements.network) problems.push('network');
  if (problems.length > 0) throw new SignatureMismatchError([...new Set(problems)].join(', '));
}

/**
 * `extensions.eip2612GasSponsoring` as the official x402 client sends it: the seller's declaration (its
 * `info.description`/`version` and `schema`, echoed — the official server rejects a payload without them)
 * with the signed permit's fields over it. Undefined when no permit was signed.
 */
function eip2612Extension(
  declared: Record<string, unknown> | undefined,
  terms: Extract<EvmSignedTerms, { scheme: 'upto' }>,
): Record<string, unknown> | undefined {
  const permit = terms.eip2612_permit;
  const declaration = declared?.[EIP2612_GAS_SPONSORING_KEY];
  if (!permit || typeof declaration !== 'object' || declaration === null) return undefined;
  const d = declaration as { info?: unknown; schema?: unknown };
  const info = typeof d.info === 'object' && d.info !== null ? (d.info as Record<string, unknown>) : {};
  return {
    [EIP2612_GAS_SPONSORING_KEY]: {
      info: { ...info, ...permit },
      ...(d.schema !== undefined ? { schema: d.schema } : {}),
    },
  };
}

/**
 * `extensions['payment-identifier']` as the official client sends it (`appendPaymentIdentifierToExtensions`
 * on the seller's declaration): the declaration echoed (its `info.required`, its `schema`) with `info.id` the
 * purchase's identifier. Undefined when the 402 does not declare the extension (nothing is added then).
 */
function paymentIdentifierExtension(
  declared: Record<string, unknown> | undefined,
  paymentId: string | undefined,
): Record<string, unknown> | undefined {
  if (paymentId === undefined || declared?.[PAYMENT_IDENTIFIER] === undefined) return undefined;
  const echo = { [PAYMENT_IDENTIFIER]: structuredClone(declared[PAYMENT_IDENTIFIER]) };
  appendPaymentIdentifierToExtensions(echo, paymentId);
  const info = (echo[PAYMENT_IDENTIFIER] as { info?: { id?: unknown } } | null)?.info;
  return info?.id === paymentId ? echo : undefined;
}

/** The payment header's name in the challenge's dialect. */
export const paymentHeaderName = (dialect: X402Dialect): string =>
  dialect === 'v2' ? X402_HEADERS.paymentSignature : X402_HEADERS.paymentLegacy;

/**
 * The paid retry's payment header, name and value, for `terms` signed for `requirements` (checked first;
 * `payer`: who should pay, when known; `paymentId`: the purchase's x402 `payment-identifier`, sent when the
 * 402 declares the extension). A Solana payment is the x402 SVM payload `{ transaction }`.
 */
export async function signedPaymentHeader(
  challenge: PaymentRequired,
  dialect: X402Dialect,
  requirements: PaymentRequirements,
  terms: SignedTerms,
  payer?: string,
  paymentId?: string,
): Promise<[string, string]> {
  await assertSignedAsAsked(terms, requirements, payer);
  const name = paymentHeaderName(dialect);
  const idExtension = paymentIdentifierExtension(challenge.extensions, paymentId);
  if (isSvmTerms(terms)) return [name, encodeSvmPaymentPayload(challenge, requirements, terms, idExtension)];
  const permitExtension = terms.scheme === 'upto' ? eip2612Extension(challenge.extensions, terms) : undefined;
  const extensions = permitExtension || idExtension ? { ...idExtension, ...permitExtension } : undefined;
  const header = encodePaymentPayload({
    x402Version: 2,
    resource: challenge.resource,
    accepted: requirements,
    payload:
      terms.scheme === 'upto'
        ? { signature: terms.signature, permit2Authorization: terms.permit2_authorization }
        : { signature: terms.signature, authorization: terms.authorization },
    ...(extensions ? { extensions } : {}),
  });
  return [name, header];
}
