/**
 * A loopback x402 seller that never takes a payment: a request without one gets its 402 (`amount` raw USDC
 * units, `maxTimeoutSeconds` as given: by default one unit for a day, the longest Treasury signs), and a paid
 * request gets a 402 again, with an error and no receipt — nothing is settled, so each signed payment stays
 * live in the buyer's purchase store until it expires. It records every payment header it received.
 */
import { encodePaymentRequired } from '../../src/x402/header-codec.js';
import type { PaymentRequirements } from '../../src/x402/wire-schemas.js';
import { paymentRequirements } from '../builders/payment-requirements.js';
import type { LoopbackServers } from './loopback-servers.js';

export interface UnsettlingSeller {
  url: string;
  /** Every payment header received, as sent. */
  paymentHeaders: string[];
}

export async function startUnsettlingSeller(
  servers: LoopbackServers,
  { amount = '1', maxTimeoutSeconds = 86_400 }: { amount?: string; maxTimeoutSeconds?: number } = {},
): Promise<UnsettlingSeller> {
  const state: UnsettlingSeller = { url: '', paymentHeaders: [] };
  const accepts = [paymentRequirements({ amount, maxTimeoutSeconds }) as PaymentRequirements];
  state.url = await servers.listen((req, res) => {
    req.resume();
    const header = req.headers['payment-signature'];
    if (typeof header === 'string') state.paymentHeaders.push(header);
    const challenge = encodePaymentRequired({
      x402Version: 2,
      resource: { url: `${state.url}${req.url}` },
      accepts,
      ...(typeof header === 'string' ? { error: 'try again' } : {}),
    });
    res.writeHead(402, { 'content-type': 'application/json', 'payment-required': challenge }).end('{}');
  });
  return state;
}
