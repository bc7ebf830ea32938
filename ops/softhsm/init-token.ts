/**
 * Initialises a SoftHSM2 token and the root KEK, idempotently (`npm run hsm:init -- --dir <dir>`, or
 * `initSoftHsmToken({ dir })` from the sandbox, tests and benchmarks).
 *
 * Creates <dir> (0700) with softhsm2.conf (tokens under <dir>/tokens), user and SO PINs in 0600 files
 * (`user.pin`, `so.pin`) in <pin-dir> (0700; `--pin-dir`, by default <dir> itself) unless given, the token (only if no token with that label exists) and the root KEK (only if absent):
 * an AES-256 token object, sensitive, non-extractable, not modifiable, that may only wrap and unwrap
 * (template: signer/backends/pkcs11/key-templates.ts). Installs softhsm2 with apt when missing and root;
 * otherwise names the exact command and fails.
 * Protects against: PINs in output (the summary names the PIN file, never a PIN), PINs in any process's
 * arguments (the token is initialised through PKCS#11 in this process — C_InitToken, C_InitPIN — never by
 * `softhsm2-util --init-token --so-pin … --pin …`, whose arguments every local user can read in the process
 * list), world-readable token files or PINs (0700 directories, 0600 files) and, with a <pin-dir> on another
 * volume (as the images do), a copy of the token's volume that carries the PINs that open it. PIN files an
 * earlier run left in <dir> are moved to <pin-dir> (written there and synced before they are removed).
 * Known limits: a local development tool, not a production HSM ceremony.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pkcs11js from 'pkcs11js';
import { rootKekTemplate } from '../../signer/backends/pkcs11/key-templates.js';

export const DEFAULT_SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so';

export interface SoftHsmToken {
  softhsm2Conf: string;
  tokenLabel: string;
  kekLabel: string;
  pinFile: string;
  modulePath: string;
}

export interface InitSoftHsmOptions {
  dir: string;
  /** Where the PIN files live; by default `dir`. */
  pinDir?: string;
  tokenLabel?: string;
  kekLabel?: string;
  userPin?: string;
  soPin?: string;
  modulePath?: string;
}

export function ensureSoftHsmInstalled(modulePath = DEFAULT_SOFTHSM_MODULE): void {
  if (fs.existsSync(modulePath)) return;
  if (process.getuid?.() !== 0) {
    throw new Error('SoftHSM2 is not installed. Run: sudo apt-get install -y softhsm2');
  }
  execFileSync('sh', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq softhsm2'], {
    stdio: 'inherit',
  });
}

/** Moves a PIN file an earlier run left at `legacy` to `file` (unless `file` exists): written and synced first. */
function moveLegacyPin(legacy: string, file: string): void {
  if (legacy === file || fs.existsSync(file) || !fs.existsSync(legacy)) return;
  const fd = fs.openSync(file, 'wx', 0o600);
  try {
    fs.writeFileSync(fd, fs.readFileSync(legacy));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.rmSync(legacy);
}

function readOrCreatePin(file: string, given: string | undefined): string {
  if (given !== undefined) {
    fs.writeFileSync(file, given + '\n', { mode: 0o600 });
    return given;
  }
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const pin = randomBytes(12).toString('hex');
  fs.writeFileSync(file, pin + '\n', { mode: 0o600 });
  return pin;
}

function tokenSlot(p11: pkcs11js.PKCS11, label: string): pkcs11js.Handle | undefined {
  for (const slot of p11.C_GetSlotList(true)) {
    const info = p11.C_GetTokenInfo(slot);
    if ((info.flags & pkcs11js.CKF_TOKEN_INITIALIZED) !== 0 && info.label.trim() === label) return slot;
  }
  return undefined;
}

/**
 * Initialises a token labelled `label` in SoftHSM's free slot (the one whose token is not initialised), sets its
 * user PIN, and returns its slot (SoftHSM gives an initialised token a slot of its own).
 */
function initTokenInFreeSlot(p11: pkcs11js.PKCS11, label: string, soPin: string, userPin: string): pkcs11js.Handle {
  const free = p11
    .C_GetSlotList(true)
    .find((slot) => (p11.C_GetTokenInfo(slot).flags & pkcs11js.CKF_TOKEN_INITIALIZED) === 0);
  if (free === undefined) throw new Error('SoftHSM offers no free slot to initialise a token in');
  // CK_UTF8CHAR[32], blank-padded (PKCS#11 2.40 §5.6); pkcs11js would pad with NULs.
  p11.C_InitToken(free, soPin, label.padEnd(32, ' '));
  const slot = tokenSlot(p11, label);
  if (slot === undefined) throw new Error(`token ${label} not found after initialisation`);
  const session = p11.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
  try {
    p11.C_Login(session, pkcs11js.CKU_SO, soPin);
    try {
      p11.C_InitPIN(session, userPin);
    } finally {
      p11.C_Logout(session);
    }
  } finally {
    p11.C_CloseSession(session);
  }
  return slot;
}

export async function initSoftHsmToken(options: InitSoftHsmOptions): Promise<SoftHsmToken> {
  const modulePath = options.modulePath ?? DEFAULT_SOFTHSM_MODULE;
  ensureSoftHsmInstalled(modulePath);
  const dir = path.resolve(options.dir);
  const tokenLabel = options.tokenLabel ?? 'treasury';
  if (Buffer.byteLength(tokenLabel) > 32) throw new Error('a token label is at most 32 bytes (PKCS#11 CK_TOKEN_INFO)');
  const kekLabel = options.kekLabel ?? 'treasury-root-kek';
  fs.mkdirSync(path.join(dir, 'tokens'), { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  const softhsm2Conf = path.join(dir, 'softhsm2.conf');
  fs.writeFileSync(
    softhsm2Conf,
    `directories.tokendir = ${path.join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n`,
    { mode: 0o600 },
  );
  const pinDir = path.resolve(options.pinDir ?? dir);
  fs.mkdirSync(pinDir, { recursive: true, mode: 0o700 });
  fs.chmodSync(pinDir, 0o700);
  for (const name of ['user.pin', 'so.pin']) moveLegacyPin(path.join(dir, name), path.join(pinDir, name));
  const pinFile = path.join(pinDir, 'user.pin');
  const userPin = readOrCreatePin(pinFile, options.userPin);
  const soPin = readOrCreatePin(path.join(pinDir, 'so.pin'), options.soPin);

  // The PKCS#11 library reads SOFTHSM2_CONF at C_Initialize; run every step in this process with it set.
  const previous = process.env.SOFTHSM2_CONF;
  process.env.SOFTHSM2_CONF = softhsm2Conf;
  const p11 = new pkcs11js.PKCS11();
  p11.load(modulePath);
  p11.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
  try {
    const slot = tokenSlot(p11, tokenLabel) ?? initTokenInFreeSlot(p11, tokenLabel, soPin, userPin);
    const session = p11.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
    try {
      p11.C_Login(session, pkcs11js.CKU_USER, userPin);
      p11.C_FindObjectsInit(session, [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
        { type: pkcs11js.CKA_LABEL, value: kekLabel },
      ]);
      let existing: pkcs11js.Handle | null;
      try {
        existing = p11.C_FindObjects(session);
      } finally {
        p11.C_FindObjectsFinal(session);
      }
      if (!existing) p11.C_GenerateKey(session, { mechanism: pkcs11js.CKM_AES_KEY_GEN }, rootKekTemplate(kekLabel));
    } finally {
      p11.C_CloseSession(session);
    }
  } finally {
    p11.C_Finalize();
    p11.close();
    if (previous === undefined) delete process.env.SOFTHSM2_CONF;
    else process.env.SOFTHSM2_CONF = previous;
  }
  return { softhsm2Conf, tokenLabel, kekLabel, pinFile, modulePath };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const flag = (name: string): string | undefined => {
    const at = process.argv.indexOf(name);
    return at > 0 && process.argv[at + 1] ? process.argv[at + 1] : undefined;
  };
  const dir = flag('--dir') ?? path.resolve('.treasury/softhsm');
  initSoftHsmToken({ dir, pinDir: flag('--pin-dir') })
    .then((token) => process.stdout.write(JSON.stringify(token) + '\n'))
    .catch((err: unknown) => {
      process.stderr.write(`hsm init failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    });
}
