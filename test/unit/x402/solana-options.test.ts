/**
 * The seller's `solana` option: checked once with the other options, every problem reported at once (a pay-to
 * that is not a 32-byte base58 address, a network @x402/svm does not accept, no facilitator or two), the
 * network's USDC by default, and Solana-only sellers (no EVM pay_to).
 */
import assert from 'node:assert/strict';
import { resolveX402Options, X402ConfigError, type X402KoaOptions } from '../../../src/x402/koa/index.js';
import { hostile } from './x402-fixtures.js';

const PAT = 'xx_pat_testtesttesttesttesttesttesttesttesttest123';
const SOL_PAY_TO = 'BPFLoaderUpgradeab1e11111111111111111111111';
const base: X402KoaOptions = {
  token: PAT,
  price: '0.01',
  facilitator_url: 'http://127.0.0.1:4022',
  api_url: 'http://127.0.0.1:8080',
  env: {},
};

function problemsOf(options: Partial<X402KoaOptions>): string[] {
  try {
    resolveX402Options({ ...base, ...options } as X402KoaOptions);
  } catch (err) {
    assert.ok(err instanceof X402ConfigError);
    return [...err.problems];
  }
  return [];
}

describe('x402 seller options: solana', () => {
  it('a Solana-only seller needs no EVM pay_to; devnet and its USDC are the defaults', () => {
    const config = resolveX402Options({
      ...base,
      solana: { pay_to: SOL_PAY_TO, facilitator_url: 'http://127.0.0.1:4023/' },
    });
    assert.equal(config.payTo, undefined);
    assert.deepEqual(config.solana, {
      network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
      payTo: SOL_PAY_TO,
      asset: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
      facilitatorUrl: 'http://127.0.0.1:4023',
    });
    assert.deepEqual(problemsOf({}), ['pay_to (or env XX_PAY_TO) is required']);
  });

  it("every problem of the solana option is reported at once, with the other options' problems", () => {
    const problems = problemsOf({
      price: 'free',
      solana: { pay_to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', network: 'solana:mainnet', asset: 'usdc' },
    });
    assert.equal(problems.length, 5, problems.join('\n'));
    assert.ok(problems.some((p) => p.startsWith('price')));
    assert.ok(problems.some((p) => p.startsWith('solana.network must be one of')));
    assert.ok(problems.some((p) => p.startsWith('solana.pay_to must be a base58')));
    assert.ok(problems.some((p) => p.startsWith('solana.asset must be')));
    assert.ok(problems.some((p) => p.startsWith('solana.facilitator_url (or solana.facilitator) is required')));
  });

  it('a base58 string that is not 32 bytes, two facilitators, or a non-object are refused', () => {
    const facilitator = { verify: async () => ({}), settle: async () => ({}) };
    assert.deepEqual(problemsOf({ solana: { pay_to: '1111', facilitator } }), [
      'solana.pay_to must be a base58 Solana address (32 bytes)',
    ]);
    assert.deepEqual(
      problemsOf({ solana: { pay_to: SOL_PAY_TO, facilitator, facilitator_url: 'http://127.0.0.1:1' } }),
      ['give solana.facilitator or solana.facilitator_url, not both'],
    );
    assert.deepEqual(problemsOf({ solana: 'yes' as never }), [
      'solana must be an object { pay_to, network?, facilitator_url | facilitator, asset? }',
    ]);
  });

  it('mainnet takes its own USDC from @x402/svm', () => {
    const config = resolveX402Options({
      ...base,
      solana: {
        pay_to: SOL_PAY_TO,
        network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
        facilitator_url: 'http://127.0.0.1:1',
      },
    });
    assert.equal(config.solana?.asset, 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');
  });

  it('every hostile value as solana.pay_to, solana.asset or solana.network is refused', () => {
    const values = [...hostile.any!, ...hostile.evm_address!, ...hostile.caip2_network!];
    for (const value of values) {
      const offer = { pay_to: SOL_PAY_TO, facilitator_url: 'http://127.0.0.1:1' };
      for (const key of ['pay_to', 'asset', 'network'] as const) {
        const problems = problemsOf({ solana: { ...offer, [key]: value } as never });
        assert.equal(problems.length, 1, `${key} = ${JSON.stringify(value)}: ${problems.join('; ')}`);
        assert.ok(problems[0]!.startsWith(`solana.${key}`), problems[0]);
      }
    }
  });
});
