/**
 * The ceilings `npm run bench` sets its payments beside, measured in the same run on the same machine: raw SoftHSM
 * signing through the signer's backend alone (and, from its CPU a signature, the signer's required work beside it,
 * ./signer-ratio-bound.ts); the bare PostgreSQL transaction of a payment's decision (an advisory lock and an insert,
 * over many keys and on one); and the signer process through its socket as the API uses it — with the store, also
 * three ways in alternating slices (./owner-policy-bench.ts).
 *
 * Why: a VM's speed moves from run to run, so a payment rate means little alone; its ratio to each stage's ceiling
 * in the same run says which stage bounds it. Limits: each ceiling runs alone on the machine (the pay phases share
 * it with every stage at once), for at most 5 s; the progress lines go to stderr.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { PrivateKeyAccount } from 'viem/accounts';
import { openBenchBackend } from './bench-token.js';
import { SignerClient } from '../../signer/protocol/signer-client.js';
import type { SoftHsmToken } from '../../ops/softhsm/init-token.js';
import { drive, type DriveResult } from './closed-loop.js';
import { measureSignerRatioBound, type SignerRatioBound } from './signer-ratio-bound.js';
import { signerStoreCeilings } from './owner-policy-bench.js';
import { BENCH_WALLET_POLICY, signerSignOnce } from './service-bench-parts.js';
import { processCpuSeconds } from './pay-bench-cpu.js';

/**
 * Raw SoftHSM signing through the backend (8 loops), and the signer's ratio bound from its CPU a signature. Points
 * this process's SOFTHSM2_CONF at the token.
 */
export async function measureHsmCeiling(o: {
  token: SoftHsmToken;
  seconds: number;
  usdc: `0x${string}`;
  payTo: `0x${string}`;
}): Promise<{ hsm: DriveResult; ratioBound: SignerRatioBound }> {
  const { token } = o;
  process.stderr.write('• ceiling: raw SoftHSM sign through the backend\n');
  process.env.SOFTHSM2_CONF = token.softhsm2Conf;
  const backend = openBenchBackend(token);
  const account = await backend.createAccountKey();
  const key = await backend.createWalletKey(account);
  const digest = randomBytes(32);
  const rawCpuBefore = process.cpuUsage();
  const hsm = await drive(8, o.seconds, async () => {
    await backend.signDigest(account, key.walletKeyRef, digest);
    return true;
  });
  const rawCpu = process.cpuUsage(rawCpuBefore);
  // What the signer must do besides the HSM, on this machine: its rate's ceiling beside the raw one.
  const ratioBound = await measureSignerRatioBound(
    backend,
    account,
    (rawCpu.user + rawCpu.system) / hsm.ops,
    o.usdc,
    o.payTo,
  );
  await backend.close();
  return { hsm, ratioBound };
}

/** The bare PostgreSQL advisory lock + insert (16 clients): over `keys` keys, then on one. */
export async function measurePostgresCeilings(o: {
  connectionString: string;
  seconds: number;
  keys: number;
}): Promise<{ dbSpread: DriveResult; dbHot: DriveResult }> {
  process.stderr.write('• ceiling: bare PostgreSQL advisory lock + insert\n');
  const pool = new pg.Pool({ connectionString: o.connectionString, max: 16 });
  await pool.query(
    'CREATE TABLE IF NOT EXISTS bench_tx (id bigserial primary key, k int not null, v bigint not null, at timestamptz not null default now())',
  );
  const dbTx = (hot: boolean) =>
    drive(16, o.seconds, async (i) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const k = hot ? 1 : i % o.keys;
        await client.query('SELECT pg_advisory_xact_lock($1)', [k]);
        await client.query('INSERT INTO bench_tx (k, v) VALUES ($1, $2)', [k, i]);
        await client.query('COMMIT');
        return true;
      } finally {
        client.release();
      }
    });
  const dbSpread = await dbTx(false);
  const dbHot = await dbTx(true);
  await pool.end();
  return { dbSpread, dbHot };
}

export interface SignerCeiling {
  /** The signer process through its socket, 8 loops. */
  signerAlone: DriveResult;
  /** The signer process's CPU a signature over `signerAlone`, µs. */
  signerCpuPerSign: number;
  /** With the store: the same three ways in alternating slices (./owner-policy-bench.ts). */
  signerStore?: Awaited<ReturnType<typeof signerStoreCeilings>>;
}

/**
 * The signer process as the API uses it — frames over its socket, structured EIP-3009 hashing, the HSM, low-S and
 * yParity — with nothing else running: the ceiling of the whole pay path's signing stage. With an approver, the same
 * on a wallet with a signed policy, and on a second signer process without the store (`startBare`).
 */
export async function measureSignerCeiling(o: {
  socket: string;
  signerPid: number | undefined;
  seconds: number;
  approver: PrivateKeyAccount | null;
  startBare: () => Promise<ChildProcess>;
  bareSocket: string;
  usdc: string;
  payTo: string;
}): Promise<SignerCeiling> {
  process.stderr.write('• ceiling: the signer process through its socket\n');
  const signerClient = new SignerClient({ socketPath: o.socket });
  const signerAccount = (await signerClient.createAccountKey()).account_key_ref;
  const signerWallet = await signerClient.createWalletKey({ account_key_ref: signerAccount });
  const signOnce = signerSignOnce(signerClient, signerAccount, signerWallet, o.usdc, o.payTo);
  for (let i = 0; i < 200; i++) await signOnce();
  const signerCpuBefore = processCpuSeconds(o.signerPid);
  const signerAlone = await drive(8, o.seconds, async () => {
    await signOnce();
    return true;
  });
  const signerCpuPerSign = ((processCpuSeconds(o.signerPid) - signerCpuBefore) / signerAlone.ops) * 1e6;
  // The same on a wallet with a signed policy, and on a second signer process without the store.
  const signerStore = o.approver
    ? await signerStoreCeilings({
        client: signerClient,
        account: signerAccount,
        wallet: signerWallet,
        signOnce,
        approver: o.approver,
        policy: BENCH_WALLET_POLICY,
        seconds: o.seconds,
        startBare: o.startBare,
        bareSocket: o.bareSocket,
        usdc: o.usdc,
        payTo: o.payTo,
      })
    : undefined;
  signerClient.close();
  return { signerAlone, signerCpuPerSign, signerStore };
}
