/**
 * Whether a PKCS#11 token can do the signer's job, asked of the token itself: the mechanisms it lists with
 * their functions (./token-requirements.ts), then each capability tried for real with session objects only —
 * an account key made and wrapped and unwrapped under another AES key, a secp256k1 key pair made, wrapped,
 * unwrapped and signed with (the signature verified here), an Ed25519 key pair made and signed with (verified).
 * Every object it makes is a session object, destroyed before it returns: a qualification leaves nothing on
 * the token. Run at every start (./pkcs11-backend.ts) and by `npm run hsm:qualify` (ops/hsm/qualify.ts).
 *
 * Defends: a token that lists a mechanism and fails it, or takes a template the signer needs with a refusal
 * (CKR_TEMPLATE_INCONSISTENT, CKR_ATTRIBUTE_VALUE_INVALID, CKR_CURVE_NOT_SUPPORTED…) — each step says which
 * CKR code it got. Does not defend: performance or capacity (the bench and the vendor's figures say those).
 */
import { randomBytes } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import pkcs11js from 'pkcs11js';
import { ckrCode } from './ckr-error-map.js';
import {
  CKM_EC_EDWARDS_KEY_PAIR_GEN,
  CKM_EDDSA,
  GENERATE_ED25519_PUBLIC_KEY,
  sessionEd25519PrivateKey,
} from './ed25519-token-keys.js';
import {
  GENERATE_ACCOUNT_KEY,
  GENERATE_WALLET_PRIVATE_KEY,
  GENERATE_WALLET_PUBLIC_KEY,
  UNWRAP_ACCOUNT_KEY,
  UNWRAP_WALLET_KEY,
  WRAP_MECHANISM,
} from './key-templates.js';
import { SignerFault } from '../../signer-error.js';
import {
  assessMechanisms,
  describeMissing,
  MECHANISM_REQUIREMENTS,
  REQUIRED_TO_START,
  type MechanismFinding,
  type TokenCapability,
} from './token-requirements.js';

export interface ProbeStep {
  capability: TokenCapability;
  step: string;
  ok: boolean;
  /** The CKR code (0x…) or the reason a step failed. */
  detail?: string;
}

export interface TokenQualification {
  mechanisms: MechanismFinding[];
  probes: ProbeStep[];
  /** A capability is usable when each of its mechanisms is listed with its functions and each probe passed. */
  usable: Record<TokenCapability, boolean>;
}

/** The token's mechanism list with each mechanism's CKF_* flags. */
export function readMechanisms(p11: pkcs11js.PKCS11, slot: pkcs11js.Handle): Map<number, number> {
  const found = new Map<number, number>();
  for (const mechanism of p11.C_GetMechanismList(slot)) {
    try {
      found.set(Number(mechanism), p11.C_GetMechanismInfo(slot, mechanism).flags);
    } catch {
      found.set(Number(mechanism), 0);
    }
  }
  return found;
}

function failure(err: unknown): string {
  const code = ckrCode(err);
  if (code !== undefined) return `CKR 0x${code.toString(16).padStart(8, '0')}`;
  return err instanceof Error ? err.message.slice(0, 120) : 'failed';
}

/** Runs the steps in order, stopping at the first failure; destroys what they made. */
function probe(
  p11: pkcs11js.PKCS11,
  session: pkcs11js.Handle,
  steps: ReadonlyArray<[TokenCapability, string, (made: pkcs11js.Handle[]) => void]>,
): ProbeStep[] {
  const made: pkcs11js.Handle[] = [];
  const results: ProbeStep[] = [];
  try {
    for (const [capability, step, run] of steps) {
      try {
        run(made);
        results.push({ capability, step, ok: true });
      } catch (err) {
        results.push({ capability, step, ok: false, detail: failure(err) });
        break;
      }
    }
  } finally {
    for (const handle of made.reverse()) {
      try {
        p11.C_DestroyObject(session, handle);
      } catch {
        /* already gone */
      }
    }
  }
  return results;
}

const check = (ok: boolean, what: string) => {
  if (!ok) throw new Error(what);
};

/** The last `length` bytes of a public key's CKA_EC_POINT (a DER OCTET STRING around the point). */
function pointTail(p11: pkcs11js.PKCS11, session: pkcs11js.Handle, key: pkcs11js.Handle, length: number): Buffer {
  const point = p11.C_GetAttributeValue(session, key, [{ type: pkcs11js.CKA_EC_POINT }])[0]?.value;
  if (!(point instanceof Buffer) || point.length < length) throw new Error('no CKA_EC_POINT');
  return point.subarray(point.length - length);
}

function hierarchyAndSecp256k1(p11: pkcs11js.PKCS11, session: pkcs11js.Handle): ProbeStep[] {
  let wrapper: pkcs11js.Handle, account: pkcs11js.Handle, wrapped: Buffer;
  let keyPair: pkcs11js.KeyPair, walletBlob: Buffer, unwrapped: pkcs11js.Handle;
  const digest = randomBytes(32);
  return probe(p11, session, [
    [
      'key_hierarchy',
      'generate an AES-256 account key',
      (made) => {
        wrapper = p11.C_GenerateKey(session, { mechanism: pkcs11js.CKM_AES_KEY_GEN }, GENERATE_ACCOUNT_KEY);
        account = p11.C_GenerateKey(session, { mechanism: pkcs11js.CKM_AES_KEY_GEN }, GENERATE_ACCOUNT_KEY);
        made.push(wrapper, account);
      },
    ],
    [
      'key_hierarchy',
      'wrap it (CKM_AES_KEY_WRAP_PAD)',
      () => {
        wrapped = p11.C_WrapKey(session, WRAP_MECHANISM, wrapper, account, Buffer.alloc(512));
      },
    ],
    [
      'key_hierarchy',
      'unwrap it as a non-extractable key',
      (made) => {
        made.push(p11.C_UnwrapKey(session, WRAP_MECHANISM, wrapper, wrapped, UNWRAP_ACCOUNT_KEY));
      },
    ],
    [
      'secp256k1',
      'generate a secp256k1 key pair',
      (made) => {
        keyPair = p11.C_GenerateKeyPair(
          session,
          { mechanism: pkcs11js.CKM_EC_KEY_PAIR_GEN },
          GENERATE_WALLET_PUBLIC_KEY,
          GENERATE_WALLET_PRIVATE_KEY,
        );
        made.push(keyPair.publicKey, keyPair.privateKey);
      },
    ],
    [
      'secp256k1',
      'wrap and unwrap it under an account key',
      (made) => {
        walletBlob = p11.C_WrapKey(session, WRAP_MECHANISM, account, keyPair.privateKey, Buffer.alloc(1024));
        unwrapped = p11.C_UnwrapKey(session, WRAP_MECHANISM, account, walletBlob, UNWRAP_WALLET_KEY);
        made.push(unwrapped);
      },
    ],
    [
      'secp256k1',
      'sign a digest (CKM_ECDSA) that verifies',
      () => {
        p11.C_SignInit(session, { mechanism: pkcs11js.CKM_ECDSA }, unwrapped);
        const signature = p11.C_Sign(session, digest, Buffer.alloc(72));
        const publicKey = pointTail(p11, session, keyPair.publicKey, 65);
        check(
          secp256k1.verify(signature, digest, publicKey, { prehash: false, lowS: false }),
          'the signature does not verify',
        );
      },
    ],
  ]);
}

function ed25519Steps(p11: pkcs11js.PKCS11, session: pkcs11js.Handle): ProbeStep[] {
  let keyPair: pkcs11js.KeyPair;
  const message = randomBytes(64);
  return probe(p11, session, [
    [
      'ed25519',
      'generate an Ed25519 key pair',
      (made) => {
        keyPair = p11.C_GenerateKeyPair(
          session,
          { mechanism: CKM_EC_EDWARDS_KEY_PAIR_GEN },
          GENERATE_ED25519_PUBLIC_KEY,
          sessionEd25519PrivateKey(),
        );
        made.push(keyPair.publicKey, keyPair.privateKey);
      },
    ],
    [
      'ed25519',
      'sign a message (CKM_EDDSA) that verifies',
      () => {
        p11.C_SignInit(session, { mechanism: CKM_EDDSA }, keyPair.privateKey);
        const signature = p11.C_Sign(session, message, Buffer.alloc(64));
        const publicKey = pointTail(p11, session, keyPair.publicKey, 32);
        check(ed25519.verify(signature, message, publicKey), 'the signature does not verify');
      },
    ],
  ]);
}

/** The token's mechanisms against the requirements, and (unless `probe: false`) each capability tried. */
export function qualifyToken(
  p11: pkcs11js.PKCS11,
  slot: pkcs11js.Handle,
  session: pkcs11js.Handle,
  options: { probe?: boolean } = {},
): TokenQualification {
  const mechanisms = assessMechanisms(readMechanisms(p11, slot));
  const listed = (capability: TokenCapability) =>
    mechanisms.filter((f) => f.requirement.capability === capability).every((f) => f.status === 'ok');
  const probes: ProbeStep[] = [];
  if (options.probe !== false) {
    if (listed('key_hierarchy') && listed('secp256k1')) probes.push(...hierarchyAndSecp256k1(p11, session));
    if (listed('ed25519')) probes.push(...ed25519Steps(p11, session));
  }
  const probed = (capability: TokenCapability) =>
    options.probe === false ||
    (probes.some((s) => s.capability === capability) && probes.every((s) => s.capability !== capability || s.ok));
  const usable = Object.fromEntries(
    [...new Set(MECHANISM_REQUIREMENTS.map((r) => r.capability))].map((c) => [c, listed(c) && probed(c)]),
  ) as Record<TokenCapability, boolean>;
  return { mechanisms, probes, usable };
}

/** What the token lacks for `capability` — missing mechanisms, else the failed probe step — or undefined. */
export function missingFor(q: TokenQualification, capability: TokenCapability): string | undefined {
  if (q.usable[capability]) return undefined;
  const mechanisms = describeMissing(q.mechanisms.filter((f) => f.requirement.capability === capability));
  if (mechanisms) return mechanisms;
  const failed = q.probes.find((s) => s.capability === capability && !s.ok);
  return failed ? `${failed.step}: ${failed.detail ?? 'failed'}` : 'not tried';
}

/**
 * Refuses a token the signer cannot start on (`hsm_unsupported`, naming each missing capability), so it never
 * says "ready" and then answers every request "retry shortly".
 */
export function assertTokenQualifies(q: TokenQualification): void {
  const gaps = REQUIRED_TO_START.flatMap((capability) => {
    const missing = missingFor(q, capability);
    return missing ? [`${capability}: ${missing}`] : [];
  });
  if (gaps.length)
    throw new SignerFault(
      'hsm_unsupported',
      `this PKCS#11 token cannot hold the signer's keys (docs/deploy-hsm.md) — ${gaps.join('; ')}`,
    );
}

/**
 * At start: qualifies the token (probes included) and refuses one the signer cannot start on; returns why it
 * cannot hold Ed25519 keys, or undefined when it can.
 */
export function qualifyForStart(
  p11: pkcs11js.PKCS11,
  slot: pkcs11js.Handle,
  session: pkcs11js.Handle,
): string | undefined {
  const qualification = qualifyToken(p11, slot, session);
  assertTokenQualifies(qualification);
  return missingFor(qualification, 'ed25519');
}
