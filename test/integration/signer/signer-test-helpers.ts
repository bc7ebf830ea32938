/**
 * Shared pieces of the signer integration tests: a valid EIP-3009 authorization builder (override one
 * field), a raw socket that speaks frames byte by byte, a /metrics reader, signing operations on one
 * account of a test signer, a signer store database migrated as a signer migrates it at start, and snapshots of a
 * store restored as a backup would be.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import pg from 'pg';
import { bytesToHex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import type { WalletPolicyInput } from '../../../policy/policy-schema.js';
import { policyStatementBytes } from '../../../policy/policy-statement.js';
import { policyTextTypedData, policyTypedData } from '../../../policy/signed-policy.js';
import { SignerError } from '../../../signer/protocol/signer-client.js';
import { encodeFrame, FrameDecoder } from '../../../signer/protocol/frame-codec.js';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { PgOwnerPolicyStore } from '../../../signer/owner-policy/pg-owner-policy-store.js';
import { siwsAttestation, type SolanaSigner } from '../../support/sign-in.js';
import { createSignerDatabase, testPostgres, type SignerDatabase } from '../../support/test-database.js';

export const BASE_SEPOLIA_USDC = {
  name: 'USDC',
  version: '2',
  chainId: 84532,
  verifyingContract: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
};
export const PAYEE = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
/** Half the secp256k1 group order: a low-S signature has s ≤ HALF_N. */
export const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

export function buildAuthorization(from: string, i: number, overrides: Record<string, string> = {}) {
  const now = Math.floor(Date.now() / 1000);
  return {
    from,
    to: PAYEE,
    value: String(1000 + i),
    validAfter: '0',
    validBefore: String(now + 600),
    nonce: `0x${i.toString(16).padStart(64, '0')}`,
    ...overrides,
  };
}

export const PERMIT2_DOMAIN = {
  name: 'Permit2',
  chainId: 84532,
  verifyingContract: '0x000000000022D473030F116dDEE9F6B43aC78BA3',
};
export const UPTO_PROXY = '0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002';
export const FACILITATOR = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

/** A valid Permit2 witness transfer (x402 upto) of at most 1000 + i raw units to PAYEE. */
export function buildPermit2Transfer(i: number) {
  const now = Math.floor(Date.now() / 1000);
  return {
    permitted: { token: BASE_SEPOLIA_USDC.verifyingContract, amount: String(1000 + i) },
    spender: UPTO_PROXY,
    nonce: String(1_000_000 + i),
    deadline: String(now + 600),
    witness: { to: PAYEE, facilitator: FACILITATOR, validAfter: '0' },
  };
}

export interface RawConnection {
  send(bytes: Buffer): void;
  request(frame: unknown): Promise<any>;
  next(timeoutMs?: number): Promise<any>;
  isClosed(): boolean;
  waitClosed(timeoutMs?: number): Promise<boolean>;
  close(): void;
}

/** A raw socket that sends bytes and collects decoded reply frames, in order. */
export function openRawConnection(socketPath: string): RawConnection {
  const socket = net.createConnection(socketPath);
  const decoder = new FrameDecoder();
  const replies: any[] = [];
  let closed = false;
  socket.on('data', (chunk) => {
    for (const e of decoder.push(chunk)) if (e.kind === 'frame') replies.push(JSON.parse(e.payload.toString()));
  });
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const next = async (timeoutMs = 5000) => {
    for (let waited = 0; replies.length === 0 && !closed && waited < timeoutMs; waited += 5) await sleep(5);
    return replies.shift();
  };
  return {
    send: (bytes) => void socket.write(bytes),
    request(frame) {
      socket.write(encodeFrame(frame));
      return next();
    },
    next,
    isClosed: () => closed,
    async waitClosed(timeoutMs = 2000) {
      for (let waited = 0; !closed && waited < timeoutMs; waited += 5) await sleep(5);
      return closed;
    },
    close: () => socket.destroy(),
  };
}

/** Sum of a metric's samples whose label set contains `labels` (e.g. `op="sign"`), from /metrics. */
export async function readMetric(port: number, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (m && m[1] === name && (m[2] ?? '').includes(labels)) sum += Number(m[3]);
  }
  return sum;
}

/** A signer wallet: its key reference and address. */
export type Wallet = { wallet_key_ref: string; address: string };

/**
 * Signing operations on `account` of a test signer, each with a fresh nonce: an EIP-3009 authorization of
 * `value` from a wallet, a Permit2 witness transfer of `amount`, and a new wallet.
 */
export function walletOps(signer: TestSigner, account: string) {
  let nonce = 0;
  return {
    sign: (w: Wallet, value: string, to = PAYEE) =>
      signer.client.signTransferAuthorization({
        account_key_ref: account,
        wallet_key_ref: w.wallet_key_ref,
        address: w.address,
        domain: BASE_SEPOLIA_USDC,
        message: buildAuthorization(w.address, nonce++, { value, to }),
      }),
    permit: (w: Wallet, amount: string) => {
      const message = buildPermit2Transfer(nonce++);
      return signer.client.signPermit2WitnessTransfer({
        account_key_ref: account,
        wallet_key_ref: w.wallet_key_ref,
        address: w.address,
        domain: PERMIT2_DOMAIN as never,
        message: { ...message, permitted: { ...message.permitted, amount } },
      });
    },
    wallet: () => signer.client.createWalletKey({ account_key_ref: account }),
  };
}

/**
 * What `create_account_key` takes to record `owner` as the account's policy authority: the owner's address and
 * a SIWE sign-in the owner signed (docs/adr/0012-owner-signed-policies.md).
 */
export async function ownerAuthority(owner: PrivateKeyAccount) {
  const message = createSiweMessage({
    address: owner.address,
    chainId: 84532,
    domain: '127.0.0.1',
    nonce: 'abcdef0123456789',
    uri: 'http://127.0.0.1/',
    version: '1',
    issuedAt: new Date(),
  });
  return {
    kind: 'owner' as const,
    address: owner.address,
    sign_in: { message, signature: await owner.signMessage({ message }) },
  };
}

/** The fields a policy document is signed over: `policy` for `wallet` at `version`, issued now. */
function policyFields(wallet: string, policy: WalletPolicyInput, version: number) {
  return { wallet, policy: policy as never, version, issuedAt: Math.floor(Date.now() / 1000) };
}

/** The set_wallet_policy document of `fields` with its `signature`. */
function policyDocument(fields: ReturnType<typeof policyFields>, signature: string) {
  const { wallet, policy, version, issuedAt } = fields;
  return { address: wallet, policy, version, issued_at: issuedAt, signature };
}

/** A set_wallet_policy document: `policy` for `wallet` at `version`, issued now, signed (EIP-712) by `by`. */
export async function signedPolicy(by: PrivateKeyAccount, wallet: string, policy: WalletPolicyInput, version = 1) {
  const fields = policyFields(wallet, policy, version);
  return policyDocument(fields, await by.signTypedData(policyTypedData(fields)));
}

/**
 * A set_wallet_policy document as `signedPolicy` makes it, signed by `by` in the `policy_text` form (the policy spelled
 * out, domain version "2") and naming it.
 */
export async function textSignedPolicy(by: PrivateKeyAccount, wallet: string, policy: WalletPolicyInput, version = 1) {
  const fields = policyFields(wallet, policy, version);
  const signature = await by.signTypedData(policyTextTypedData(fields));
  return { ...policyDocument(fields, signature), form: 'policy_text' as const };
}

/** What `create_account_key` takes for a SIWS owner: their base58 key and the sign-in they signed (`signer`: forged). */
export function siwsAuthority(owner: SolanaSigner, signer?: SolanaSigner) {
  const { message, signature } = siwsAttestation(owner, 'abcdef0123456789', signer ? { signer } : {});
  return { kind: 'owner' as const, address: owner.address, sign_in: { scheme: 'siws' as const, message, signature } };
}

/** A policy document for `wallet` signed by the Solana key `by` as the statement text (hex signature). */
export function statementSigned(by: SolanaSigner, wallet: string, policy: WalletPolicyInput, version: number) {
  const fields = policyFields(wallet, policy, version);
  return policyDocument(fields, bytesToHex(ed25519.sign(policyStatementBytes(fields), by.secret)));
}

/** The signer's refusal of `call` (its code and details); fails the test if the signer accepted it. */
export async function refusal(call: Promise<unknown>): Promise<{ code: string; details: any }> {
  try {
    await call;
  } catch (err) {
    if (err instanceof SignerError) return { code: err.code, details: err.details };
    throw err;
  }
  assert.fail('the signer accepted a request it should have refused');
}

/** 'signed' for a signature, else the signer's error code. */
export const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'signed',
    (err: SignerError) => err.code,
  );

/** A signer's placement rules outside production mode: other roles are warned of, never refused. */
export const DEVELOPMENT_PLACEMENT = Object.freeze({ production: false, acceptedRoles: [] });

/** The signer's policy store over `connectionString`, without leases (its caller closes it). */
export function signerPolicyStore(connectionString: string, poolMax = 1): PgOwnerPolicyStore {
  return new PgOwnerPolicyStore({
    connectionString,
    poolMax,
    openSpendLeaseMs: 0,
    lookBackSeconds: 60,
    placement: DEVELOPMENT_PLACEMENT,
  });
}

/** A database and role for a signer's policy store, migrated as the signer does at start (dropped by `drop()`). */
export async function migratedSignerStore(): Promise<SignerDatabase> {
  const store = await createSignerDatabase();
  const policies = signerPolicyStore(store.connectionString);
  try {
    await policies.prepare();
  } finally {
    await policies.close();
  }
  return store;
}

/**
 * Snapshots of a signer store's database, as a backup taken and restored would be (`CREATE DATABASE … TEMPLATE`:
 * nothing may be connected to the database copied), made and dropped by the server's superuser; `drop()` removes
 * them (before the store's own `drop()`, which drops the role that owns them).
 */
export function storeSnapshots(store: SignerDatabase) {
  const name = new URL(store.connectionString).pathname.slice(1);
  const made: string[] = [];
  const admin = async (statements: string[]) => {
    const client = new pg.Client({ connectionString: (await testPostgres()).urlFor('postgres') });
    await client.connect();
    try {
      for (const statement of statements) await client.query(statement);
    } finally {
      await client.end();
    }
  };
  return {
    /** A copy of the store as it is now (no connection to it may be open). */
    async take(): Promise<string> {
      const copy = `${name}_snap${made.length}`;
      made.push(copy);
      await admin([`CREATE DATABASE ${copy} TEMPLATE ${name} OWNER ${store.role}`]);
      return copy;
    },
    /** The store replaced by `copy` (connections to the store are ended; `copy` is kept for another restore). */
    async restore(copy: string): Promise<void> {
      await admin([
        `DROP DATABASE ${name} WITH (FORCE)`,
        `CREATE DATABASE ${name} TEMPLATE ${copy} OWNER ${store.role}`,
        `REVOKE ALL ON DATABASE ${name} FROM PUBLIC`,
      ]);
    },
    async drop(): Promise<void> {
      await admin(made.map((copy) => `DROP DATABASE IF EXISTS ${copy} WITH (FORCE)`));
    },
  };
}

/** The store's generation now (migration 0010_store_generation), read as the signer's role. */
export async function storeGeneration(store: SignerDatabase): Promise<number> {
  const client = new pg.Client({ connectionString: store.connectionString });
  await client.connect();
  try {
    return Number((await client.query('SELECT generation FROM signer_store_generation')).rows[0].generation);
  } finally {
    await client.end();
  }
}

/**
 * A signer process with its own policy store for the enclosing suite: started before its tests (`started` is told
 * of it, and again at each restart), then stopped, its store dropped and its token's folder removed.
 */
export function useStoredSigner(prefix: string, started: (signer: TestSigner) => void) {
  const held: { signer?: TestSigner; store?: SignerDatabase; dir?: string } = {};
  const start = () => startTestSigner({ dir: held.dir!, policyStore: held.store! });
  before(async () => {
    held.dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    held.store = await createSignerDatabase();
    held.signer = await start();
    started(held.signer);
  });
  after(async () => {
    await held.signer?.stop();
    await held.store?.drop();
    if (held.dir) fs.rmSync(held.dir, { recursive: true, force: true });
  });
  return {
    /** The store's database (its connection string reaches it as the signer does). */
    store: (): SignerDatabase => held.store!,
    /** Another signer process on the same token and store; its caller stops it. */
    another: start,
    /** Stops the signer (killed with SIGKILL first when `kill`) and starts it again on the same token and store. */
    async restart(kill: boolean): Promise<void> {
      if (kill) held.signer!.child.kill('SIGKILL');
      await held.signer!.stop();
      held.signer = await start();
      started(held.signer);
    },
  };
}
