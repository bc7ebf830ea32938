/**
 * A loopback x402 seller that declares the `payment-identifier` extension with the official
 * `declarePaymentIdentifierExtension` (required unless told) and checks each paid request the way the official resource
 * server does before verify: the payload decoded with `decodePaymentSignatureHeader`, its accepted entry one
 * of the 402's, its extension echo checked with `x402ResourceServer.validateExtensions` (else a 402
 * `extension_echo_mismatch`) and the identifier required (`validatePaymentIdentifierRequirement`). It settles
 * nothing (no chain): it records every payment header it received and answers 200 with a receipt — or, while
 * `dropPaid` is above zero, drops the connection instead (a lost answer: the buyer cannot tell whether it paid);
 * while `stallPaid` is above zero, never answers (the connection stays open until the servers close).
 */
import http from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import {
  decodePaymentSignatureHeader,
  encodePaymentRequiredHeader,
  encodePaymentResponseHeader,
} from '@x402/core/http';
import { x402ResourceServer } from '@x402/core/server';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import {
  declarePaymentIdentifierExtension,
  extractPaymentIdentifier,
  PAYMENT_IDENTIFIER,
  validatePaymentIdentifierRequirement,
} from '@x402/extensions/payment-identifier';
import { paymentRequirements } from '../builders/payment-requirements.js';
import type { LoopbackServers } from './loopback-servers.js';

export interface PurchaseSeller {
  url: string;
  /** The price in raw USDC units (6 decimals) the next 402 asks. */
  amount: string;
  /** Paid requests still to be answered by dropping the connection. */
  dropPaid: number;
  /** Paid requests still to be held without an answer. */
  stallPaid: number;
  /** Every payment header received, as sent. */
  paymentHeaders: string[];
  /** The payment identifier of each payment header received. */
  ids: Array<string | null>;
  /** The decoded payloads. */
  payloads: Array<Record<string, any>>;
}

/** `required`: whether the 402 declares the identifier required (then a payment without one is refused). */
export async function startPurchaseSeller(
  servers: LoopbackServers,
  { amount = '10000', required: idRequired = true }: { amount?: string; required?: boolean } = {},
): Promise<PurchaseSeller> {
  const state: PurchaseSeller = {
    url: '',
    amount,
    dropPaid: 0,
    stallPaid: 0,
    paymentHeaders: [],
    ids: [],
    payloads: [],
  };
  const resourceServer = new x402ResourceServer();
  const paymentRequired = (url: string): PaymentRequired => ({
    x402Version: 2 as const,
    resource: { url, description: 'a report', mimeType: 'application/json' },
    accepts: [paymentRequirements({ amount: state.amount, maxTimeoutSeconds: 300 }) as PaymentRequirements],
    extensions: { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(idRequired) },
  });
  const handler: http.RequestListener = (req, res) => {
    req.resume();
    const required = paymentRequired(`${state.url}${req.url}`);
    const header = req.headers['payment-signature'];
    const challenge = (error?: string) =>
      res
        .writeHead(402, {
          'payment-required': encodePaymentRequiredHeader({ ...required, ...(error ? { error } : {}) }),
        })
        .end('{}');
    if (typeof header !== 'string') return challenge();
    state.paymentHeaders.push(header);
    const payload = decodePaymentSignatureHeader(header);
    state.payloads.push(payload as Record<string, any>);
    state.ids.push(extractPaymentIdentifier(payload));
    if (!required.accepts.some((a) => isDeepStrictEqual(a, payload.accepted)))
      return challenge('no_matching_requirements');
    const echo = resourceServer.validateExtensions(required, payload);
    if (!echo.valid) return challenge(echo.invalidReason);
    if (!validatePaymentIdentifierRequirement(payload, idRequired).valid)
      return challenge('payment_identifier_required');
    if (state.dropPaid > 0) {
      state.dropPaid -= 1;
      res.socket?.destroy();
      return;
    }
    if (state.stallPaid > 0) {
      state.stallPaid -= 1;
      return;
    }
    const receipt = encodePaymentResponseHeader({
      success: true,
      transaction: `0x${'ab'.repeat(32)}`,
      network: payload.accepted.network,
      payer: (payload.payload as { authorization?: { from?: string } }).authorization?.from ?? '',
    } as Parameters<typeof encodePaymentResponseHeader>[0]);
    res.writeHead(200, { 'content-type': 'application/json', 'payment-response': receipt }).end('{"report":"ok"}');
  };
  state.url = await servers.listen(handler);
  return state;
}
