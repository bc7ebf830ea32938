/**
 * createX402Buyer reads at most so much of a seller's answer (`maxChallengeBytes` for a 402, default 4 MiB;
 * `maxResponseBytes` for any other answer): a seller on loopback HTTP streaming a body past the cap makes the
 * exchange fail with `ResponseTooLargeError` (code `response_too_large`, the status, the limit and whether a
 * payment was sent), and the buyer stops reading there — the seller gets to write little more than the cap
 * and the socket buffers. A declared `content-length` above the cap fails before the body is read. A paid
 * answer past the cap keeps its purchase: the same purchase key sends the same payment again, never a second.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import type { X402BuyerOptions } from '../../../src/sdk/index.js';
import { buyerOf, challengeHeader, loopbackSeller, type LoopbackSeller } from './loopback-seller.js';
import { fakeTreasuryHandler, scriptedServer, type ScriptedServer } from './scripted-http.js';

const MiB = 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'a');

/** What a streaming answer came to: the bytes written before the buyer hung up (or all of them). */
interface Streamed {
  written: number;
  done: Promise<void>;
}

/** Writes `total` bytes in chunks, as fast as the reader takes them; stops when the connection closes. */
function stream(res: http.ServerResponse, total: number): Streamed {
  const state: Streamed = { written: 0, done: Promise.resolve() };
  state.done = new Promise<void>((resolve) => {
    res.on('close', () => resolve());
    const pump = () => {
      while (state.written < total && !res.destroyed) {
        state.written += CHUNK.length;
        if (!res.write(CHUNK)) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end();
    };
    pump();
  });
  return state;
}

describe('buyer SDK: a seller body past the cap is refused (ResponseTooLargeError), not buffered', function () {
  this.timeout(60_000);
  let treasury: ScriptedServer;
  let seller: LoopbackSeller;
  const streams: Streamed[] = [];

  beforeEach(async () => {
    treasury = await scriptedServer(fakeTreasuryHandler());
    seller = await loopbackSeller();
    streams.length = 0;
  });
  afterEach(async () => {
    await seller.close();
    await treasury.close();
  });

  const newBuyer = (extra: Partial<X402BuyerOptions> = {}) => buyerOf(treasury, extra);
  const pays = () => treasury.requests.filter((r) => r.url.endsWith('/pay'));
  const tooLarge =
    (fields: { status_code: number; limit_bytes: number; payment_sent: boolean }) =>
    (err: unknown): boolean => {
      const e = err as Record<string, unknown>;
      assert.equal(e.code, 'response_too_large', String(err));
      assert.equal(e.name, 'ResponseTooLargeError');
      assert.deepEqual(
        { status_code: e.status_code, limit_bytes: e.limit_bytes, payment_sent: e.payment_sent },
        fields,
      );
      return true;
    };

  it('a 402 streaming 48 MiB: refused at the default 4 MiB, nothing signed, the seller stopped well short', async () => {
    seller.handler = (req, res) => {
      res.writeHead(402, challengeHeader(req));
      streams.push(stream(res, 48 * MiB));
    };
    await assert.rejects(
      newBuyer().request(seller.url),
      tooLarge({ status_code: 402, limit_bytes: 4 * MiB, payment_sent: false }),
    );
    await streams[0]!.done;
    assert.ok(streams[0]!.written < 24 * MiB, `the seller wrote ${streams[0]!.written} bytes`);
    assert.equal(pays().length, 0, 'Treasury was not asked to sign');
  });

  it('a free answer past maxResponseBytes is refused; a declared content-length past it fails before the body', async () => {
    seller.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      streams.push(stream(res, 16 * MiB));
    };
    await assert.rejects(
      newBuyer({ maxResponseBytes: MiB }).request(seller.url),
      tooLarge({ status_code: 200, limit_bytes: MiB, payment_sent: false }),
    );
    await streams[0]!.done;
    assert.ok(streams[0]!.written < 12 * MiB, `the seller wrote ${streams[0]!.written} bytes`);

    // Announces 10 MiB, sends one byte and waits: the buyer must not wait for the rest.
    seller.handler = (_req, res) => res.writeHead(200, { 'content-length': String(10 * MiB) }).write('a');
    await assert.rejects(
      newBuyer({ maxResponseBytes: MiB }).request(seller.url),
      tooLarge({ status_code: 200, limit_bytes: MiB, payment_sent: false }),
    );
  });

  it('a paid answer past the cap: payment_sent, and the same purchase key sends the same payment again', async () => {
    seller.handler = (req, res) => {
      if (!req.headers['payment-signature']) return void res.writeHead(402, challengeHeader(req)).end('{}');
      res.writeHead(200, { 'content-type': 'text/plain' });
      streams.push(stream(res, 8 * MiB));
    };
    const buyer = newBuyer({ maxResponseBytes: MiB });
    await assert.rejects(
      buyer.request(seller.url, { purchaseKey: 'report-1' }),
      tooLarge({ status_code: 200, limit_bytes: MiB, payment_sent: true }),
    );
    await assert.rejects(
      buyer.request(seller.url, { purchaseKey: 'report-1' }),
      tooLarge({ status_code: 200, limit_bytes: MiB, payment_sent: true }),
    );
    assert.equal(pays().length, 1, 'signed once');
    assert.equal(seller.paymentHeaders.length, 2);
    assert.equal(seller.paymentHeaders[1], seller.paymentHeaders[0], 'the same payment, byte for byte');
  });

  it('the caps are options: checked like every other (a positive whole number of bytes)', () => {
    assert.doesNotThrow(() => newBuyer({ maxChallengeBytes: 64 * 1024, maxResponseBytes: 256 * MiB }));
    for (const bad of [0, -1, 1.5, '4096', 2 ** 40]) {
      assert.throws(
        () => newBuyer({ maxChallengeBytes: bad as number }),
        (err: Error & { code?: string }) => err.code === 'invalid_argument',
      );
      assert.throws(
        () => newBuyer({ maxResponseBytes: bad as number }),
        (err: Error & { code?: string }) => err.code === 'invalid_argument',
      );
    }
  });
});
