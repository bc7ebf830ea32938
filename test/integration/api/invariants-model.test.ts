/**
 * The trust invariants as a model-based test (fast-check commands) against the real API, PostgreSQL, the
 * SoftHSM signer process, anvil with its EIP-3009 USDC, the x402 facilitator and a gate per tenant: random
 * sequences of operations by two tenants with every kind of bearer they hold — mint (PATs, PATs within PATs,
 * single-use ones), exchange, change a PAT's daily cap, revoke, revoke-all, pay, pay across tenants, change
 * prices, pay sellers on chain (through the platform or around it) and report it, flush payouts, unpaid gate
 * requests with generated paths — and after every step the invariants of test/support/model/invariants.ts: no
 * credential outlives or outranks its parent (expiry, revocation, scope, gate, daily cap), every PAT shows the
 * cap it spends under, spend stays within every cap, nobody is owed money the platform did not collect, no
 * signature without its record, and the gate forwards unpaid only what is free.
 *
 * The property first plays one fixed sequence through a PAT's lineage and its cap changes (`lineageCaps`), then
 * random ones. Seeded and replayable (a fixed seed by default, so every run plays the same sequences): the seed
 * and the path of a failure are printed; run again with TREASURY_MODEL_SEED=<seed> (and TREASURY_MODEL_PATH=<path> to
 * replay the shrunk case only). TREASURY_MODEL_RUNS sets the number of runs (default 4, each up to 40 steps);
 * TREASURY_MODEL_VERBOSE=1 prints each run's steps.
 */
import fc from 'fast-check';
import { startTestTreasury } from '../../support/api-harness.js';
import { anvilDevAccount, fundFromFaucet, startTestChain } from '../../support/chain-harness.js';
import {
  Exchange,
  MintAgentPat,
  MintFromTreasuryPat,
  MintWithin,
  Revoke,
  RevokeAllSessions,
  SetPatCap,
} from '../../support/model/credential-steps.js';
import { GateRequest, gateTarget } from '../../support/model/gate-steps.js';
import { AwaitVerification, BUYER_ACCOUNTS, BuyerPays, Flush, Pay, SetPrice } from '../../support/model/money-steps.js';
import { closeTenant, newTenant, type Model, type Real } from '../../support/model/model-world.js';
import { findFreePort } from '../../support/signer-harness.js';

const tenant = fc.nat(1);
const bearer = fc.nat(20);
const steps = [
  fc
    .tuple(
      tenant,
      fc.option(fc.integer({ min: 1, max: 300 }), { nil: null }),
      fc.option(fc.constant(3600), { nil: null }),
    )
    .map(([i, cap, ttl]) => new MintAgentPat(i, cap, ttl)),
  fc.tuple(tenant, fc.option(fc.constant(600), { nil: null })).map(([i, ttl]) => new MintFromTreasuryPat(i, ttl)),
  fc.tuple(tenant, bearer, fc.boolean()).map(([i, b, once]) => new MintWithin(i, b, once)),
  fc.tuple(tenant, bearer).map(([i, b]) => new Exchange(i, b)),
  fc
    .tuple(tenant, bearer, fc.option(fc.integer({ min: 1, max: 300 }), { nil: null }), fc.boolean())
    .map(([i, b, cap, atChild]) => new SetPatCap(i, b, cap, atChild)),
  fc.tuple(tenant, bearer).map(([i, b]) => new Revoke(i, b)),
  tenant.map((i) => new RevokeAllSessions(i)),
  fc.tuple(tenant, bearer, fc.integer({ min: 1, max: 120 }), fc.boolean()).map(([i, b, c, x]) => new Pay(i, b, c, x)),
  fc
    .tuple(tenant, bearer, fc.integer({ min: 0, max: 500 }), fc.boolean())
    .map(([i, b, c, x]) => new SetPrice(i, b, c, x)),
  fc
    .tuple(tenant, fc.nat(1), fc.integer({ min: 1, max: 5_000 }), fc.boolean())
    .map(([i, b, c, around]) => new BuyerPays(i, b, c, around)),
  tenant.map((i) => new AwaitVerification(i)),
  fc.tuple(tenant, bearer, fc.boolean()).map(([i, b, x]) => new Flush(i, b, x)),
  fc
    .tuple(tenant, fc.constantFrom('GET' as const, 'POST' as const, 'OPTIONS' as const), gateTarget)
    .map(([i, method, target]) => new GateRequest(i, method, target)),
];

/**
 * A sequence every run plays first (fast-check `examples`): an agent PAT, a PAT within it and one within that,
 * their cap lifted, lowered below a payment and raised, and the PAT within asked to change its own.
 */
const lineageCaps = () => [
  new MintAgentPat(0, 500, null),
  new MintWithin(0, 0, false),
  new MintWithin(0, 1, false),
  new SetPatCap(0, 0, null, false),
  new SetPatCap(0, 1, 100, true),
  new SetPatCap(0, 2, 100, false),
  new Pay(0, 5, 150, false),
  new SetPatCap(0, 1, 300, false),
  new Pay(0, 5, 150, false),
];

describe('trust invariants, model-based (HTTP, PostgreSQL, SoftHSM, anvil, gate; fast-check)', function () {
  this.timeout(900_000);
  let real: Real;

  before(async () => {
    const signerMetricsPort = await findFreePort();
    const chain = await startTestChain();
    const t = await startTestTreasury({
      signerEnv: { TREASURY_SIGNER_METRICS_PORT: String(signerMetricsPort) },
      extraEnv: {
        TREASURY_RPC_URLS: JSON.stringify({ [chain.network]: chain.rpcUrl }),
        TREASURY_LEDGER_NOT_FOUND_GRACE_SECONDS: '0',
        TREASURY_LEDGER_VERIFY_INTERVAL_MS: '100',
        TREASURY_FACILITATOR_URL: chain.facilitatorUrl,
        TREASURY_MOR_NETWORKS: chain.network,
      },
    });
    for (const i of BUYER_ACCOUNTS) await fundFromFaucet(chain, anvilDevAccount(i).address, '100000');
    real = { t, chain, signerMetricsPort };
  });
  after(async () => {
    await real?.t.stop();
    await real?.chain.stop();
  });

  it('no credential outlives or outranks its parent; spend within caps; owed ≤ collected; signatures recorded; the gate forwards unpaid only what is free', async () => {
    const seed = Number(process.env.TREASURY_MODEL_SEED ?? 20261128);
    const path = process.env.TREASURY_MODEL_PATH;
    await fc.assert(
      fc.asyncProperty(fc.commands(steps, { maxCommands: 40, size: 'max' }), async (cmds) => {
        const model: Model = { tenants: [await newTenant(real, 'a'), await newTenant(real, 'b')] };
        try {
          await fc.asyncModelRun(() => ({ model, real }), cmds);
        } finally {
          if (process.env.TREASURY_MODEL_VERBOSE) console.log(String(cmds));
          await Promise.all(model.tenants.map(closeTenant));
        }
      }),
      {
        seed,
        numRuns: Number(process.env.TREASURY_MODEL_RUNS ?? 4),
        examples: [[lineageCaps()]],
        ...(path ? { path } : {}),
        endOnFailure: true,
      },
    );
  });
});
