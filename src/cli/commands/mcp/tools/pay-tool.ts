/**
 * `pay`: the whole x402 exchange through the buyer SDK (src/sdk): request the URL, and when the seller asks
 * for payment, have Treasury sign it under the wallet's policy and the agent PAT's daily cap — refused above
 * `max_usd`, never raised; on `network` only when named (Base or Solana; without `wallet_id` the agent's first
 * wallet on it) — then return the status, what was paid and the seller's answer (content type and body, cut
 * past MAX_BODY_CHARS with a note) wrapped as untrusted data (`seller_response`, ../seller-content.ts). What was
 * paid is what was signed, never the seller's receipt (the SDK's `summarizePayment`): `amount_usd` the accepted
 * price (an `upto` payment's settled amount once Treasury verified it), `network` the network signed for,
 * `tx_hash` the receipt's transaction only when it has a settlement's shape on that network (else null). A
 * seller's refusal — not settled (`payment_failed`) or settled, then refused (`PaymentRejectedError`) — is
 * told by its status; its reason, receipt and body travel in `details.seller_response`, wrapped. Each call is
 * one purchase with an x402 payment identifier, returned as `purchase_id` (also on a refusal); a call with
 * `purchase_id` retries that purchase: the payment it signed is sent again, and Treasury answers the same
 * identifier with the authorization it recorded — never a second; only on the method and URL it was made for
 * (another is `purchase_request_mismatch`, nothing sent: src/sdk/x402-purchase.ts). The server's purchases hold
 * at most MAX_LIVE_PURCHASES_PER_ORIGIN live ones per seller origin (src/sdk/purchase-origin-bound.ts): past it a
 * new purchase there is `purchase_origin_limit_reached`, nothing signed, and other sellers are still paid.
 *
 * Defends: a model overriding the payment or bearer headers (authorization, payment-signature, x-payment are
 * refused), unbounded inputs (every field bounded), a huge seller body flooding the model's context, the URL
 * naming a loopback or private address (refused unless allowed: ../seller-fetch.ts), a seller's answer read as
 * instructions, a seller's receipt or refusal reason reaching the model outside the wrapper or passing for the
 * amount paid, a `purchase_id` of one URL sending its payment to another (refused by the buyer SDK).
 * Does not: judge a public URL; the wallet's policy and the caps limit where money goes; a `purchase_id` of an
 * earlier run of this server (its purchases live in memory) named with another URL — Treasury answers the
 * identifier, for the same terms, with the payment it signed.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { capabilitySchema } from '../../../../sdk/treasury-client-schemas.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { generatePaymentId } from '@x402/extensions/payment-identifier';
import {
  createX402Buyer,
  memoryPurchaseStore,
  paymentIdSchema,
  PaymentRejectedError,
  summarizePayment,
  X402PaymentFailedError,
  type X402Result,
} from '../../../../sdk/index.js';
import { walletIdInput, type ToolContext } from '../tool-context.js';
import { guarded, refusalOf, toolOk, toolRefusal } from '../tool-results.js';
import { sellerResponse, sellerResponseText, type SellerResponse } from '../seller-content.js';
import { resolveNetwork } from '../../buy/network-argument.js';
import { payOutputSchema } from './pay-output.js';

export { MAX_BODY_CHARS } from '../seller-content.js';
const FORBIDDEN_HEADERS = new Set(['authorization', 'payment-signature', 'x-payment', 'cookie', 'host']);

export const usdInput = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,8})(\.[0-9]{1,6})?$/)
  .describe('USD as a decimal string, e.g. "0.05"');

const payInput = {
  url: z
    .string()
    .max(2048)
    .url()
    .refine((u) => /^https?:\/\//i.test(u), 'expected an http(s) URL')
    .describe('The paid resource, http(s)'),
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).optional().describe('HTTP method (default GET)'),
  headers: z
    .record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/), z.string().max(1024))
    .refine((h) => Object.keys(h).length <= 32, 'at most 32 headers')
    .optional()
    .describe('Extra request headers (not authorization or payment headers)'),
  body: z.string().max(65_536).optional().describe('Request body as text (JSON for APIs)'),
  max_usd: usdInput.describe('The most to pay for this request, USD decimal string such as "0.05"'),
  wallet_id: walletIdInput.optional(),
  network: z
    .string()
    .max(64)
    .regex(/^[-a-z0-9]{1,16}(?::[-_a-zA-Z0-9]{1,32})?$/)
    .optional()
    .describe(
      "Pay only on this network: base, base-sepolia, solana, solana-devnet or a CAIP-2 id; default the wallet's (without wallet_id: the first wallet on it)",
    ),
  capability: capabilitySchema
    .optional()
    .describe("What the payment is for (e.g. search.web): matched against the wallet policy's capability caps"),
  purchase_id: paymentIdSchema
    .optional()
    .describe(
      'To retry a purchase whose outcome is unknown (a lost answer, a time-out): the purchase_id an earlier pay call returned, with the same url and method. The same purchase_id never pays twice. Omit it for a new purchase.',
    ),
};

/** A refusal that names its purchase: calling pay again with it retries that purchase, never paying twice. */
function withPurchaseId(refused: CallToolResult, purchaseId: string): CallToolResult {
  refused.structuredContent = { ...refused.structuredContent, purchase_id: purchaseId };
  refused.content.push({
    type: 'text',
    text: `purchase_id: ${purchaseId} (if the outcome is unknown, call pay again with this purchase_id: it never pays twice)`,
  });
  return refused;
}

export function registerPay(server: McpServer, tools: ToolContext): void {
  // Purchases this server began and the payments they signed: a retry with a purchase_id sends its payment again.
  const purchases = memoryPurchaseStore();
  server.registerTool(
    'pay',
    {
      title: 'Pay for a request (x402)',
      description:
        'Request a URL and pay its x402 price from a Treasury wallet, at most max_usd; returns the response and the payment.',
      inputSchema: payInput,
      outputSchema: payOutputSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async (input) => {
      const purchaseId = input.purchase_id ?? generatePaymentId();
      return withPurchaseIdOnRefusal(purchaseId, async () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(input.headers ?? {})) {
          if (FORBIDDEN_HEADERS.has(name.toLowerCase()))
            return toolRefusal({
              error_code: 'invalid_argument',
              user_message: `The header "${name}" cannot be set; remove it and call pay again.`,
            });
          headers[name.toLowerCase()] = value;
        }
        if (input.body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
        const network = input.network === undefined ? undefined : resolveNetwork(input.network, tools.apiUrl);
        if (input.network !== undefined && network === undefined)
          return toolRefusal({
            error_code: 'invalid_argument',
            user_message: `Unknown network "${input.network}"; use base, base-sepolia, solana, solana-devnet or a CAIP-2 id.`,
          });
        const wallet = await tools.wallet(input.wallet_id, network);
        const buyer = createX402Buyer({
          client: tools.sdk,
          walletId: wallet.id,
          maxPriceUsd: input.max_usd,
          fetch: tools.sellerFetch,
          purchases,
          ...(input.capability ? { capability: input.capability } : {}),
          ...(network ? { network } : {}),
        });
        let result: X402Result;
        try {
          result = await buyer.request(input.url, {
            method: input.method ?? 'GET',
            headers,
            ...(input.body !== undefined ? { body: input.body } : {}),
            paymentId: purchaseId,
          });
        } catch (err) {
          return payRefusal(input.url, err);
        }
        const seller = sellerResponse(input.url, result.headers.get('content-type'), result.body);
        const payment = paymentFields(result, purchaseId, wallet.id);
        if (result.status >= 400) {
          const refused = toolRefusal({
            error_code: 'request_failed',
            user_message: `The seller answered HTTP ${result.status}${result.paid ? '' : '; nothing was paid'}.`,
            status: result.status,
            details: payment,
          });
          return withSellerResponse(refused, seller);
        }
        return toolOk(
          { ...payment, seller_response: seller },
          `${JSON.stringify(payment)}\n${sellerResponseText(seller)}`,
        );
      });
    },
  );
}

/** The answer's payment fields: what was signed, not what the seller's receipt says (see the header). */
function paymentFields(result: X402Result, purchaseId: string, walletId: string) {
  const paid = summarizePayment(result);
  return {
    status: result.status,
    paid: result.paid,
    purchase_id: purchaseId,
    wallet_id: walletId,
    amount_usd: paid?.amount_usd ?? null,
    tx_hash: paid?.transaction ?? null,
    network: paid?.network ?? null,
    ...(result.settlement
      ? { settled_usd: result.settlement.settled_usd, given_back_usd: result.settlement.given_back_usd }
      : {}),
  };
}

/** A refusal with the seller's answer in `details.seller_response` and, in the text, between the markers only. */
function withSellerResponse(refused: CallToolResult, seller: SellerResponse): CallToolResult {
  refused.content.push({ type: 'text', text: sellerResponseText(seller) });
  refused.structuredContent = {
    ...refused.structuredContent,
    details: {
      ...(refused.structuredContent?.details as Record<string, unknown> | undefined),
      seller_response: seller,
    },
  };
  return refused;
}

/**
 * What the exchange threw, as a refusal (../tool-results.ts). A seller's refusal of the signed payment is told
 * there by its status only; what the seller said — its reason, its receipt, its body — is added here as
 * `details.seller_response`, wrapped.
 */
function payRefusal(url: string, err: unknown): CallToolResult {
  const refused = refusalOf(err);
  if (err instanceof X402PaymentFailedError)
    return withSellerResponse(refused, sellerResponse(url, null, err.body, { reason: err.reason }));
  if (err instanceof PaymentRejectedError)
    return withSellerResponse(
      refused,
      sellerResponse(url, null, err.body, err.receipt ? { receipt: { ...err.receipt } } : {}),
    );
  return refused;
}

/** The tool's work; a refusal (returned or thrown) names the purchase. */
async function withPurchaseIdOnRefusal(
  purchaseId: string,
  work: () => Promise<CallToolResult>,
): Promise<CallToolResult> {
  const result = await guarded(work);
  return result.isError ? withPurchaseId(result, purchaseId) : result;
}
