/**
 * The meaning of each treasury-signer variable (signer/config/signer-config.ts, signer/config/aws-kms-config.ts;
 * their schema gives the names, defaults and order), the names the signer refuses, and its health check's, for
 * docs/configuration.md.
 */
import type { Entries } from './entry.js';

/** treasury-signer: signer/config/signer-config.ts and signer/config/aws-kms-config.ts. */
export const SIGNER_ENTRIES: Entries = {
  TREASURY_SIGNER_SOCKET: { meaning: 'the unix socket the signer listens on (≤ 107 bytes); required' },
  TREASURY_SIGNER_SOCKET_MODE: {
    meaning: "`0600`: only the signer's user may connect; `0660`: its group too (the API's user, in the images)",
  },
  TREASURY_KEY_BACKEND: { meaning: '`pkcs11` (an HSM, SoftHSM locally) or `aws-kms`', default: '`pkcs11`' },
  TREASURY_SIGNER_BACKEND: { meaning: 'older name of `TREASURY_KEY_BACKEND`, still read; the two must agree' },
  TREASURY_KMS_REGION: { meaning: 'AWS Region of the keys; required with `aws-kms` (docs/aws-kms.md)' },
  TREASURY_KMS_ENDPOINT: {
    meaning: "endpoint override (a VPC endpoint, the emulator); unset: the Region's public one",
  },
  TREASURY_SIGNER_OWNER_POLICIES: {
    meaning:
      '`off`: no policy store, on purpose — production mode refuses to start without TREASURY_SIGNER_DATABASE_URL otherwise (docs/deploy-hsm.md, "7. The signer\'s policy store: a database and a role of its own"); `on`: a store is required in every mode. `off` beside a store and `on` without one are refused',
  },
  TREASURY_SIGNER_ACCEPT_STORE_ROLES: {
    meaning:
      "roles other than the signer's that its start found able to reach the policy store, named exactly as the refusal names them (comma-separated, at most 32): still warned of at every start, no longer refused in production mode; a role not named is refused all the same",
  },
  NODE_ENV: { meaning: '`production`: production mode (below); the signer image sets it' },
  TREASURY_ENV: { meaning: '`production`: production mode (below), as `NODE_ENV=production`' },
  TREASURY_SIGNER_DATABASE_URL: {
    meaning:
      "the signer's own PostgreSQL database (owner-signed policies, their spend windows), with a role only the signer holds; unset: owner-signed policies are off (docs/adr/0012-owner-signed-policies.md)",
  },
  TREASURY_SIGNER_DATABASE_POOL: { meaning: "connections to the signer's own database" },
  TREASURY_SIGNER_OPEN_SPEND_LEASE_MS: {
    meaning:
      "how long the store's word that a wallet has no signed policy lets its spends be recorded just after release (`0`: always before); every `set_wallet_policy` answers this much later (docs/adr/0012-owner-signed-policies.md)",
  },
  TREASURY_SIGNER_POLICY_APPROVER: {
    meaning: 'address whose signature sets the policies of accounts made without an owner key (api-key accounts)',
  },
  TREASURY_KMS_SIGN_RATE_PER_SECOND: {
    meaning: "Sign calls per second this signer allows itself (`0`: no limit): its share of the account's quota",
  },
  TREASURY_KMS_DEADLINE_MS: { meaning: 'each KMS operation, retries included, ends by this many ms' },
  TREASURY_KMS_ATTEMPT_TIMEOUT_MS: { meaning: 'one KMS request attempt (≤ the deadline)' },
  TREASURY_KMS_DELETION_WINDOW_DAYS: { meaning: "KMS's pending window before a destroyed key is deleted (7–30)" },
  TREASURY_KMS_ALIAS_PREFIX: { meaning: 'alias prefix of the wallet keys (`alias/<prefix>/…`)' },
  TREASURY_KMS_MAX_IN_FLIGHT: { meaning: 'KMS requests in flight at once' },
  TREASURY_KMS_TOMBSTONE_FILE: { meaning: 'where destroyed key ids are remembered across restarts' },
  TREASURY_KMS_SIGNER_PRINCIPAL_ARN: { meaning: "IAM principal named in each new key's policy as the signer" },
  TREASURY_KMS_ADMIN_PRINCIPAL_ARN: { meaning: "IAM principal named in each new key's policy as its administrator" },
  TREASURY_PKCS11_MODULE: { meaning: "path of the HSM vendor's PKCS#11 library (docs/deploy-hsm.md)" },
  TREASURY_PKCS11_TOKEN_LABEL: { meaning: 'label of the token (slot) the signer logs in to' },
  TREASURY_PKCS11_TOKEN_SERIAL: {
    meaning: "the token's serial number, required when more than one token carries the label (refused otherwise)",
  },
  TREASURY_PKCS11_PIN: { meaning: 'the user PIN (prefer `TREASURY_PKCS11_PIN_FILE`; never both)' },
  TREASURY_PKCS11_PIN_FILE: {
    meaning: 'file holding the user PIN; refused if other users can read it (a mounted secret)',
  },
  TREASURY_PKCS11_KEK_LABEL: { meaning: 'label of the root KEK (AES-256, non-extractable) on the token' },
  TREASURY_PKCS11_SESSIONS: {
    meaning:
      'PKCS#11 sessions the signer keeps open; as many sign at once only with as many libuv threads (`UV_THREADPOOL_SIZE`)',
  },
  UV_THREADPOOL_SIZE: {
    meaning:
      'Node\'s variable, read when the process starts: the threads the HSM\'s calls run on (1–1024); the signer warns at start when `TREASURY_PKCS11_SESSIONS` is larger (docs/deploy-hsm.md, "Sessions and threads")',
  },
  TREASURY_PKCS11_SIGN_INLINE: { meaning: '`when_alone`: sign on the main thread when no other call waits; `never`' },
  TREASURY_SIGNER_KEY_CACHE_SIZE: {
    meaning:
      'key handles kept: unwrapped keys, and Ed25519 wallet keys remembered at start and at their making (`0`: none)',
  },
  TREASURY_SIGNER_KEY_CACHE_TTL_SECONDS: { meaning: 'how long an unwrapped key handle is kept' },
  TREASURY_SIGNER_ALLOWED_TOKENS: {
    meaning:
      '`chainId:0xaddress` (EVM) and `solana:<network>:<mint>` entries, comma-separated: the only tokens the signer signs for; a mainnet token (e.g. `8453:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913`, USDC on Base) only when named here; required in production mode',
    default: 'testnet only: USDC on Base Sepolia and on Solana devnet',
  },
  TREASURY_SIGNER_PERMIT2_ADDRESS: { meaning: 'the Permit2 contract `upto` payments are signed for' },
  TREASURY_SIGNER_PERMIT2_SPENDERS: { meaning: 'the only Permit2 spenders the signer signs for, comma-separated' },
  TREASURY_SIGNER_MAX_PER_SIGNATURE: {
    meaning: 'most one signature may move, raw 6-decimal units',
    default: '`100000000` (100 USDC)',
  },
  TREASURY_SIGNER_MAX_VALUE: { meaning: 'older name of `TREASURY_SIGNER_MAX_PER_SIGNATURE`, still read' },
  TREASURY_SIGNER_WALLET_MAX_PER_HOUR: { meaning: 'most one wallet may sign for in a rolling hour (raw units)' },
  TREASURY_SIGNER_WALLET_MAX_PER_DAY: { meaning: 'most one wallet may sign for in a rolling day (raw units)' },
  TREASURY_SIGNER_WALLET_SIGNATURES_PER_MINUTE: { meaning: 'signatures per wallet per rolling minute' },
  TREASURY_SIGNER_WALLET_SIGNATURES_PER_HOUR: { meaning: 'signatures per wallet per rolling hour' },
  TREASURY_SIGNER_WALLET_RECEIPTS_PER_MINUTE: {
    meaning: "policy receipts per wallet per rolling minute (a ceiling of their own: never the payments')",
  },
  TREASURY_SIGNER_WALLET_RECEIPTS_PER_HOUR: { meaning: 'policy receipts per wallet per rolling hour' },
  TREASURY_SIGNER_LIMITS_STATE_FILE: {
    meaning:
      'where the per-wallet windows are kept across restarts (appended to every second, compacted in the background, rewritten at start and stop); unset: memory only',
  },
  TREASURY_SIGNER_STORE_WATERMARK_FILE: {
    meaning:
      "where the highest policy-store generation this signer has seen is kept: a store restored from an older backup is refused at start (docs/backup-restore.md); back it up with the signer's host, never with the store",
    default:
      '`store-watermark.json` beside `TREASURY_SIGNER_LIMITS_STATE_FILE`; neither set: none (a warning at start)',
  },
  TREASURY_SIGNER_ACCEPT_STORE_GENERATION: {
    meaning:
      "start once on a policy store older than the watermark file: the store's exact generation, as the refusal names it (each value is accepted once); remove it afterwards",
  },
  TREASURY_SIGNER_MAX_VALIDITY_SECONDS: { meaning: 'longest validity window of a signed authorization' },
  TREASURY_SIGNER_METRICS_PORT: { meaning: "loopback port for the signer's `/metrics`; unset: none" },
  TREASURY_SIGNER_IDLE_TIMEOUT_SECONDS: { meaning: 'an idle client connection is closed after this long' },
  TREASURY_SIGNER_MAX_QUEUE: { meaning: 'requests queued before the signer answers `busy`' },
  TREASURY_SIGNER_LOG_LEVEL: { meaning: 'pino log level' },
  TREASURY_EXIT_WITH_PARENT: { meaning: '`1`: exit when the parent process goes away (set by the sandbox)' },
};

/** Names the signer refuses when set (AWS credentials come from the SDK's default chain only). */
export const REFUSED_ENTRIES: Entries = {
  TREASURY_KMS_ACCESS_KEY_ID: { meaning: "refused: AWS credentials come only from the AWS SDK's default chain" },
  TREASURY_KMS_SECRET_ACCESS_KEY: { meaning: 'refused, as above' },
  TREASURY_KMS_SESSION_TOKEN: { meaning: 'refused, as above' },
  TREASURY_AWS_ACCESS_KEY_ID: { meaning: 'refused, as above' },
  TREASURY_AWS_SECRET_ACCESS_KEY: { meaning: 'refused, as above' },
};

/** signer/health-check.ts: the signer image's HEALTHCHECK. */
export const SIGNER_HEALTH_ENTRIES: Entries = {
  TREASURY_SIGNER_SOCKET: { meaning: 'the socket to ask for `health`', default: 'required' },
  TREASURY_SIGNER_HEALTH_TIMEOUT_MS: { meaning: 'how long the check waits for the answer', default: '`3000`' },
};
