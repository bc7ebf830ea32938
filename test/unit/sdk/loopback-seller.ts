/**
 * A seller on loopback HTTP for the buyer SDK's tests, whose answers the test sets per case (`handler`), with the
 * payment headers it received; its 402 (the one entry of test/unit/x402/x402-fixtures.ts, for the resource that
 * was asked — the buyer pays only the origin whose challenge it signed); and a buyer paying it through a stand-in
 * Treasury (./scripted-http.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodePaymentRequired } from '../../../src/x402/header-codec.js';
import { createX402Buyer, TreasuryClient, type X402BuyerOptions } from '../../../src/sdk/index.js';
import { requirements } from '../x402/x402-fixtures.js';
import { WALLET_ID, type ScriptedServer } from './scripted-http.js';

export interface LoopbackSeller {
  /** `http://127.0.0.1:<port>/x`. */
  url: string;
  /** What answers each request (a request's body is read and dropped first). */
  handler: http.RequestListener;
  /** Every `payment-signature` header received, in order. */
  paymentHeaders: string[];
  close(): Promise<void>;
}

export async function loopbackSeller(): Promise<LoopbackSeller> {
  const seller: LoopbackSeller = { url: '', handler: () => {}, paymentHeaders: [], close: async () => {} };
  const server = http.createServer((req, res) => {
    req.resume();
    const paid = req.headers['payment-signature'];
    if (typeof paid === 'string') seller.paymentHeaders.push(paid);
    seller.handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  seller.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
  seller.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return seller;
}

/** The 402 header of the seller that answered `req`. */
export const challengeHeader = (req: Pick<http.IncomingMessage, 'headers' | 'url'>) => ({
  'payment-required': encodePaymentRequired({
    x402Version: 2,
    resource: { url: `http://${req.headers.host}${req.url}` },
    accepts: [requirements()],
  }),
});

/** A buyer of the stand-in Treasury's wallet, with `extra` options. */
export const buyerOf = (treasury: ScriptedServer, extra: Partial<X402BuyerOptions> = {}) =>
  createX402Buyer({
    client: new TreasuryClient({ apiUrl: treasury.url, token: 'xx_pat_test' }),
    walletId: WALLET_ID,
    ...extra,
  });
