/**
 * What an `xx mcp` tool answers: a result (the data as structured content, and as JSON text for clients that
 * read only text), or a refusal — an `isError: true` result whose text says what happened and what to do
 * next in words a model can act on, and whose structured content carries `error_code`, `user_message` and
 * the API's recovery block (docs/api.md#errors) unchanged, so a client can branch on `recovery.kind`. Both
 * shapes are what each tool's `outputSchema` announces (./tool-output.ts).
 *
 * Defends: a bearer, session or seed reaching the model — the errors mapped here carry the server's fields
 * and the SDK's figures only, and an unknown error shows its message, never its cause chain or stack; a
 * seller's words passing for the tool's — a seller's refusal (`payment_failed`, `PaymentRejectedError`) is
 * told by its HTTP status only, and its reason, receipt and body are the pay tool's to hand on, marked as
 * untrusted (./tools/pay-tool.ts).
 * Does not: decide anything; each tool chooses which of its failures are refusals.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  InsufficientBudgetError,
  InsufficientFundsError,
  NoCompatibleAcceptError,
  PatCapReachedError,
  PaymentRejectedError,
  Permit2AllowanceRequiredError,
  ReauthenticateError,
  SellerTimeoutError,
  TreasuryApiError,
  TreasurySdkError,
  X402PaymentFailedError,
} from '../../../sdk/index.js';
import { CliError } from '../../core/cli-error.js';
import type { Refusal } from './tool-output.js';

/** What a model should do next, by recovery kind (spec'd kinds; an unknown kind gets no advice). */
const NEXT_STEP: Record<string, string> = {
  raise_max_amount:
    'The price is above max_usd. Ask the user whether to pay required_amount_usd, then call pay again with that max_usd.',
  raise_pat_cap:
    "The agent's daily spending cap is reached. Do not retry today; a person must raise the cap at settings_url.",
  fund_wallet: 'The wallet lacks USDC. Tell the user to fund it (deposit_url / deposit_uri); do not retry until then.',
  reauthenticate: "The agent's credential was refused. A person must sign in again (cli_command / login_command).",
  use_alternate_scheme: "The seller offers no scheme this wallet pays with (offered_schemes); don't retry.",
  create_wallet: 'There is no wallet on the chain the seller asks for. A person must create one (dashboard_url).',
};

export function toolOk(data: Record<string, unknown>, text?: string): CallToolResult {
  return { content: [{ type: 'text', text: text ?? JSON.stringify(data) }], structuredContent: data };
}

export function toolRefusal(refusal: Refusal): CallToolResult {
  const kind = typeof refusal.recovery?.kind === 'string' ? refusal.recovery.kind : undefined;
  const next = kind ? NEXT_STEP[kind] : undefined;
  const text = [
    `Refused (${refusal.error_code}): ${refusal.user_message}`,
    ...(next ? [`Next step: ${next}`] : []),
    JSON.stringify(refusal),
  ].join('\n');
  return { isError: true, content: [{ type: 'text', text }], structuredContent: { ...refusal } };
}

const withRecovery = (r: Record<string, unknown> | undefined) => (r ? { recovery: r } : {});

/**
 * How the exchange with the seller ended, when it failed there. The seller's own words (its reason, its receipt,
 * its body) are not in these: the pay tool hands them on as untrusted data (../seller-content.ts).
 */
function sellerRefusal(err: unknown): CallToolResult | undefined {
  if (err instanceof PaymentRejectedError)
    return toolRefusal({
      error_code: 'PaymentRejectedError',
      user_message: `The payment settled but the seller answered HTTP ${err.status_code}. Settlement is irreversible; do not pay again.`,
      details: { status_code: err.status_code },
    });
  if (err instanceof X402PaymentFailedError)
    return toolRefusal({
      error_code: 'payment_failed',
      user_message: `The seller did not accept the payment (HTTP ${err.status_code}); it was not settled.`,
      details: { status_code: err.status_code },
    });
  if (err instanceof SellerTimeoutError)
    return toolRefusal({
      error_code: 'seller_timeout',
      user_message: `The seller did not answer within ${err.timeout_ms / 1000} s. ${
        err.payment_sent
          ? 'A payment was sent: call pay again with the same purchase_id to send that same payment (never a second).'
          : 'Nothing was paid.'
      }`,
      details: { timeout_ms: err.timeout_ms, payment_sent: err.payment_sent },
    });
  return undefined;
}

/** Any error a tool's work threw, as a refusal (the API's recovery block unchanged). */
export function refusalOf(err: unknown): CallToolResult {
  if (err instanceof InsufficientBudgetError)
    return toolRefusal({
      error_code: 'InsufficientBudgetError',
      user_message: `The price ${err.requested_usd} USD is above max_usd ${err.cap_usd} USD; nothing was paid.`,
      recovery: { ...err.recovery },
      details: { requested_usd: err.requested_usd, cap_usd: err.cap_usd },
    });
  if (err instanceof PatCapReachedError)
    return toolRefusal({ error_code: 'MGMT_6014', user_message: err.userMessage, status: 429, recovery: err.recovery });
  if (err instanceof InsufficientFundsError)
    return toolRefusal({
      error_code: 'insufficient_funds',
      user_message: err.message,
      recovery: { ...err.recovery },
      details: { address: err.wallet.address, balance_usd: err.wallet.balance_usd },
    });
  if (err instanceof NoCompatibleAcceptError)
    return toolRefusal({
      error_code: 'NoCompatibleAcceptError',
      user_message: err.message,
      recovery: { ...err.recovery },
    });
  if (err instanceof ReauthenticateError)
    return toolRefusal({
      error_code: 'reauthenticate',
      user_message: err.userMessage,
      status: 401,
      recovery: err.recovery,
    });
  if (err instanceof Permit2AllowanceRequiredError)
    return toolRefusal({
      error_code: 'permit2_allowance_required',
      user_message: err.userMessage,
      status: err.apiError.status,
      ...withRecovery(err.apiError.recovery),
    });
  const seller = sellerRefusal(err);
  if (seller) return seller;
  if (err instanceof TreasuryApiError)
    return toolRefusal({
      error_code: err.code,
      user_message: err.userMessage,
      status: err.status,
      ...withRecovery(err.recovery),
      ...(err.decisionId ? { decision_id: err.decisionId } : {}),
    });
  if (err instanceof CliError)
    return toolRefusal({
      error_code: err.code,
      user_message: err.userMessage,
      ...(err.status !== undefined ? { status: err.status } : {}),
      ...withRecovery(err.recovery),
      ...(typeof err.details.decision_id === 'string' ? { decision_id: err.details.decision_id } : {}),
    });
  if (err instanceof TreasurySdkError) return toolRefusal({ error_code: err.code, user_message: err.message });
  if (err instanceof TypeError)
    return toolRefusal({
      error_code: 'network_error',
      user_message: `The request failed: ${err.cause instanceof Error ? err.cause.message : err.message}`,
    });
  return toolRefusal({
    error_code: 'internal_error',
    user_message: err instanceof Error ? err.message : 'The tool failed.',
  });
}

/** Runs a tool's work; anything it throws becomes a refusal. */
export async function guarded(work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (err) {
    return refusalOf(err);
  }
}
