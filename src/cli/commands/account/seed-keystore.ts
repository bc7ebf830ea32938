/**
 * The encrypted seed keystore (docs/cli.md, "Secrets"; docs/adr/0005-xx-cli.md): a BIP39 mnemonic sealed
 * with XChaCha20-Poly1305 (@noble/ciphers) under a key from scrypt (@noble/hashes) of the passphrase, in a
 * 0600 JSON file. The header (format, name,
 * KDF parameters) is authenticated as associated data, so it cannot be swapped without failing to open.
 *
 * Defends against: reading the seed from a copied file without the passphrase (scrypt N=2^17 by default
 * makes guessing expensive); tampering with the ciphertext or header (authentication fails).
 * Does not defend against: a weak passphrase, or malware on the machine while the CLI runs.
 * XX_KEYSTORE_SCRYPT_LOG_N lowers the cost for tests only (minimum 2^10); never lower it for real seeds —
 * under XX_ENV=prod or preprod a value below the default is refused (exit 2), so a test setting copied into
 * a production env file cannot weaken a real keystore.
 */
import { randomBytes } from 'node:crypto';
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { scryptAsync } from '@noble/hashes/scrypt.js';
import { z } from 'zod';
import { CliError } from '../../core/cli-error.js';

const hex = z.string().regex(/^[0-9a-f]+$/);
/**
 * The highest scrypt cost a keystore may name: N = 2^20 with r = 8 takes 1 GiB, under `deriveKey`'s 2-GiB memory
 * bound; 2^21 would need more than it allows, so such a keystore could be neither sealed nor opened.
 */
const MAX_LOG_N = 20;
export const keystoreSchema = z.object({
  format: z.literal('xx-seed-keystore-1'),
  name: z.string(),
  kdf: z.object({
    name: z.literal('scrypt'),
    log_n: z.number().int().min(10).max(MAX_LOG_N),
    r: z.literal(8),
    p: z.literal(1),
    salt: hex,
  }),
  cipher: z.object({ name: z.literal('xchacha20-poly1305'), nonce: hex }),
  ciphertext: hex,
  addresses: z.object({ base: z.string().optional(), solana: z.string().optional() }),
  created_at: z.string(),
});
export type Keystore = z.infer<typeof keystoreSchema>;

const DEFAULT_LOG_N = 17;
const PRODUCTION_ENVS = new Set(['prod', 'preprod']);

function defaultLogN(): number {
  const raw = process.env.XX_KEYSTORE_SCRYPT_LOG_N;
  if (raw === undefined) return DEFAULT_LOG_N;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 10 || n > MAX_LOG_N)
    throw new CliError({
      code: 'invalid_env',
      userMessage: `XX_KEYSTORE_SCRYPT_LOG_N must be an integer from 10 to ${MAX_LOG_N}.`,
      exitCode: 2,
    });
  if (n < DEFAULT_LOG_N && PRODUCTION_ENVS.has(process.env.XX_ENV ?? '')) {
    throw new CliError({
      code: 'invalid_env',
      userMessage: `XX_KEYSTORE_SCRYPT_LOG_N below ${DEFAULT_LOG_N} weakens the keystore and is for tests only; it is refused under XX_ENV=${process.env.XX_ENV}.`,
      exitCode: 2,
    });
  }
  return n;
}

const aad = (k: Pick<Keystore, 'format' | 'name' | 'kdf'>) =>
  new TextEncoder().encode(JSON.stringify({ format: k.format, name: k.name, kdf: k.kdf }));

async function deriveKey(passphrase: string, kdf: Keystore['kdf']): Promise<Uint8Array> {
  return scryptAsync(new TextEncoder().encode(passphrase.normalize('NFKC')), Buffer.from(kdf.salt, 'hex'), {
    N: 2 ** kdf.log_n,
    r: kdf.r,
    p: kdf.p,
    dkLen: 32,
    maxmem: 2 ** 31,
  });
}

export async function sealMnemonic(
  mnemonic: string,
  passphrase: string,
  name: string,
  addresses: Keystore['addresses'],
): Promise<Keystore> {
  if (passphrase.length < 8)
    throw new CliError({
      code: 'weak_passphrase',
      userMessage: 'The keystore passphrase needs at least 8 characters.',
      exitCode: 2,
      details: { flag: 'XX_KEYSTORE_PASSPHRASE' },
    });
  const header = {
    format: 'xx-seed-keystore-1' as const,
    name,
    kdf: {
      name: 'scrypt' as const,
      log_n: defaultLogN(),
      r: 8 as const,
      p: 1 as const,
      salt: randomBytes(32).toString('hex'),
    },
  };
  const nonce = randomBytes(24);
  const key = await deriveKey(passphrase, header.kdf);
  const ciphertext = xchacha20poly1305(key, nonce, aad(header)).encrypt(new TextEncoder().encode(mnemonic));
  key.fill(0);
  return {
    ...header,
    cipher: { name: 'xchacha20-poly1305', nonce: nonce.toString('hex') },
    ciphertext: Buffer.from(ciphertext).toString('hex'),
    addresses,
    created_at: new Date().toISOString(),
  };
}

export async function openMnemonic(keystore: Keystore, passphrase: string): Promise<string> {
  const key = await deriveKey(passphrase, keystore.kdf);
  try {
    const plain = xchacha20poly1305(key, Buffer.from(keystore.cipher.nonce, 'hex'), aad(keystore)).decrypt(
      Buffer.from(keystore.ciphertext, 'hex'),
    );
    return new TextDecoder().decode(plain);
  } catch {
    throw new CliError({
      code: 'wrong_passphrase',
      userMessage: `Could not open the keystore "${keystore.name}": wrong passphrase or a modified file.`,
    });
  } finally {
    key.fill(0);
  }
}
