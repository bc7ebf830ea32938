/**
 * The KMS emulator's in-memory key store: keys, their states, tags and policies, and aliases; and the
 * resolution of a `KeyId` the way real KMS accepts it: a key id (UUID), a key ARN, an alias name
 * (`alias/...`) or an alias ARN. ARNs are well-formed for the emulator's region and fake account
 * (`arn:aws:kms:us-east-1:111122223333:key/<uuid>`); an ARN naming another region or account is not found,
 * as it would be for a caller without cross-account access.
 *
 * Key states follow AWS's key-state table for asymmetric keys: Enabled, Disabled, PendingDeletion. Sign,
 * Verify and GetPublicKey refuse a Disabled key with DisabledException and a PendingDeletion key with
 * KMSInvalidStateException; state changes and aliases on a PendingDeletion key are refused with
 * KMSInvalidStateException. A deletion window never elapses by itself: tests call
 * `completePendingDeletions()` to make scheduled keys vanish (then every reference is NotFound).
 *
 * What it does not defend: everything lives in this process's memory, private keys included, and is
 * lost when it exits. This is a TEST DOUBLE, never a place to keep a key.
 */
import { randomUUID } from 'node:crypto';
import { KmsError, kmsErrors } from './kms-errors.js';
import { generateEd25519KeyPair, type Ed25519KeyPair } from './ed25519-key-pair.js';
import { generateSecp256k1KeyPair, type Secp256k1KeyPair } from './secp256k1-key-pair.js';

export type KeyState = 'Enabled' | 'Disabled' | 'PendingDeletion';
/** The asymmetric key specs the emulator makes (for SIGN_VERIFY). */
export const EMULATED_KEY_SPECS = ['ECC_SECG_P256K1', 'ECC_NIST_EDWARDS25519'] as const;
export type EmulatedKeySpec = (typeof EMULATED_KEY_SPECS)[number];

export interface EmulatedKey {
  readonly keyId: string;
  readonly arn: string;
  readonly creationDate: Date;
  readonly description: string;
  readonly policy: string;
  readonly keySpec: EmulatedKeySpec;
  readonly material: Secp256k1KeyPair | Ed25519KeyPair;
  readonly tags: Map<string, string>;
  state: KeyState;
  deletionDate?: Date;
  pendingWindowInDays?: number;
}

export interface EmulatedAlias {
  readonly aliasName: string;
  readonly aliasArn: string;
  targetKeyId: string;
  readonly creationDate: Date;
  lastUpdatedDate: Date;
}

export interface KeyStoreOptions {
  region: string;
  accountId: string;
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export class KeyStore {
  readonly region: string;
  readonly accountId: string;
  private readonly keys = new Map<string, EmulatedKey>();
  private readonly aliases = new Map<string, EmulatedAlias>();

  constructor(options: KeyStoreOptions) {
    this.region = options.region;
    this.accountId = options.accountId;
  }

  get arnPrefix(): string {
    return `arn:aws:kms:${this.region}:${this.accountId}:`;
  }

  createKey(input: {
    keySpec: EmulatedKeySpec;
    description: string;
    policy: string;
    tags: ReadonlyArray<{ TagKey: string; TagValue: string }>;
  }): EmulatedKey {
    const keyId = randomUUID();
    const key: EmulatedKey = {
      keyId,
      arn: `${this.arnPrefix}key/${keyId}`,
      creationDate: new Date(),
      description: input.description,
      policy: input.policy,
      keySpec: input.keySpec,
      material: input.keySpec === 'ECC_NIST_EDWARDS25519' ? generateEd25519KeyPair() : generateSecp256k1KeyPair(),
      tags: new Map(input.tags.map((t) => [t.TagKey, t.TagValue])),
      state: 'Enabled',
    };
    this.keys.set(keyId, key);
    return key;
  }

  /** Keys in creation order (ListKeys' order; real KMS does not promise one). */
  listKeys(): EmulatedKey[] {
    return [...this.keys.values()];
  }

  listAliases(): EmulatedAlias[] {
    return [...this.aliases.values()];
  }

  /** Resolves a KeyId as KMS does (key id, key ARN, alias name, alias ARN) or throws NotFoundException. */
  resolve(keyIdInput: string): EmulatedKey {
    const id = keyIdInput;
    let keyId: string | undefined;
    if (id.startsWith('alias/')) {
      keyId = this.aliases.get(id)?.targetKeyId;
      if (keyId === undefined) throw kmsErrors.notFound(`Alias ${this.arnPrefix}${id}`);
    } else if (id.startsWith('arn:')) {
      if (!id.startsWith(this.arnPrefix)) {
        if (!/^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(key|alias)\/.+$/.test(id))
          throw new KmsError('InvalidArnException', `ARN ${id} is not a valid KMS ARN.`);
        throw kmsErrors.notFound(`Resource ${id}`);
      }
      const resource = id.slice(this.arnPrefix.length);
      if (resource.startsWith('alias/')) return this.resolve(resource);
      if (!resource.startsWith('key/')) throw new KmsError('InvalidArnException', `ARN ${id} is not a valid KMS ARN.`);
      keyId = resource.slice('key/'.length);
    } else {
      keyId = id;
    }
    const key = this.keys.get(keyId);
    if (!key) {
      if (!UUID_PATTERN.test(keyId)) throw kmsErrors.notFound(`Invalid keyId ${id}`);
      throw kmsErrors.notFound(`Key '${this.arnPrefix}key/${keyId}'`);
    }
    return key;
  }

  /** A key id or key ARN only (the target of an alias may not be an alias). */
  resolveKeyNotAlias(keyIdInput: string): EmulatedKey {
    if (keyIdInput.startsWith('alias/') || keyIdInput.startsWith(`${this.arnPrefix}alias/`)) {
      throw kmsErrors.validation(`${keyIdInput} must be a key id or a key ARN, not an alias.`);
    }
    return this.resolve(keyIdInput);
  }

  createAlias(aliasName: string, key: EmulatedKey): EmulatedAlias {
    if (this.aliases.has(aliasName)) {
      throw new KmsError(
        'AlreadyExistsException',
        `An alias with the name ${this.arnPrefix}${aliasName} already exists`,
      );
    }
    const now = new Date();
    const alias: EmulatedAlias = {
      aliasName,
      aliasArn: `${this.arnPrefix}${aliasName}`,
      targetKeyId: key.keyId,
      creationDate: now,
      lastUpdatedDate: now,
    };
    this.aliases.set(aliasName, alias);
    return alias;
  }

  getAlias(aliasName: string): EmulatedAlias {
    const alias = this.aliases.get(aliasName);
    if (!alias) throw kmsErrors.notFound(`Alias ${this.arnPrefix}${aliasName}`);
    return alias;
  }

  deleteAlias(aliasName: string): void {
    this.getAlias(aliasName);
    this.aliases.delete(aliasName);
  }

  /**
   * Makes every key pending deletion disappear, as if its waiting period had elapsed, with the aliases
   * that pointed at it (KMS deletes them with the key). Answers the ids of the deleted keys.
   */
  completePendingDeletions(): string[] {
    const deleted: string[] = [];
    for (const key of this.keys.values()) {
      if (key.state !== 'PendingDeletion') continue;
      this.keys.delete(key.keyId);
      deleted.push(key.keyId);
    }
    for (const [name, alias] of this.aliases) if (deleted.includes(alias.targetKeyId)) this.aliases.delete(name);
    return deleted;
  }

  get size(): number {
    return this.keys.size;
  }
}

/** Throws the KMS error for using a key in a cryptographic operation unless it is Enabled. */
export function assertUsable(key: EmulatedKey): void {
  if (key.state === 'Disabled') throw kmsErrors.disabled(key.arn);
  if (key.state === 'PendingDeletion') throw kmsErrors.pendingDeletion(key.arn);
}

/** Throws KMSInvalidStateException when the key is pending deletion (state changes, tags, aliases). */
export function assertNotPendingDeletion(key: EmulatedKey): void {
  if (key.state === 'PendingDeletion') throw kmsErrors.pendingDeletion(key.arn);
}
