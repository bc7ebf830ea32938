/** The variables of `npm start` (ops/sandbox/) and the SoftHSM tool (ops/softhsm/): listed here whole, for docs/configuration.md. */
import type { Entries } from './entry.js';

export const SANDBOX_ENTRIES: Entries = {
  TREASURY_SANDBOX_CHAIN: { meaning: '`0`: no local chain, faucet or facilitator', default: '`1`' },
  TREASURY_SANDBOX_KEY_BACKEND: { meaning: '`pkcs11` (SoftHSM) or `aws-kms` (the KMS emulator)', default: '`pkcs11`' },
  TREASURY_SANDBOX_RPC_PORT: { meaning: 'local chain port (`0`: any free port)', default: '`8545`' },
  TREASURY_SANDBOX_FAUCET_PORT: { meaning: 'faucet port', default: '`8547`' },
  TREASURY_SANDBOX_FACILITATOR_PORT: { meaning: 'facilitator port', default: '`4022`' },
  TREASURY_SANDBOX_SELLER_PORT: { meaning: 'demo seller port', default: '`8403`' },
  TREASURY_SANDBOX_GATE_PORT: {
    meaning: 'the gate in front of the demo origin (`0`: any free port)',
    default: '`8404`',
  },
  TREASURY_SANDBOX_ORIGIN_PORT: {
    meaning: 'the demo origin with no payment code behind the gate (`0`: any free port)',
    default: '`8405`',
  },
  TREASURY_SANDBOX_KMS_PORT: { meaning: 'KMS emulator port', default: '`4599`' },
  TREASURY_SANDBOX_SOLANA: {
    meaning: '`0`: no offline Solana chain, Solana faucet, facilitator or demo seller (docs/sandbox.md)',
    default: '`1`',
  },
  TREASURY_SANDBOX_SOLANA_RPC_PORT: {
    meaning: "the Solana chain's JSON-RPC port (`0`: any free port)",
    default: '`8899`',
  },
  TREASURY_SANDBOX_SOLANA_FACILITATOR_PORT: { meaning: 'the Solana x402 facilitator port', default: '`4023`' },
  TREASURY_SANDBOX_SOLANA_FAUCET_PORT: { meaning: 'the Solana faucet port', default: '`8548`' },
  TREASURY_SANDBOX_SOLANA_SELLER_PORT: { meaning: 'the Solana demo seller port', default: '`8406`' },
  TREASURY_SOLANA_RPC_URL: {
    meaning:
      'with `TREASURY_SANDBOX_SOLANA=0`: a local validator the sandbox API reads; must be loopback (`sandbox_solana_rpc_not_loopback` otherwise)',
  },
  ANVIL_BIN: { meaning: 'an anvil binary to use instead of the one from npm' },
  PATH: { meaning: 'where anvil is looked up' },
  SOFTHSM2_CONF: {
    meaning: "SoftHSM's configuration file (read by the SoftHSM library; set by the token tool and the images)",
  },
  TREASURY_DATA_DIR: { meaning: 'where the sandbox keeps everything', default: '`.treasury`' },
  TREASURY_PORT: { meaning: "the API's port", default: '`8402`' },
  TREASURY_HOST: { meaning: "the API's address", default: '`127.0.0.1`' },
  TREASURY_EMBEDDED_PG_PORT: { meaning: 'embedded PostgreSQL port', default: '`54329`' },
  DATABASE_URL: { meaning: 'use this PostgreSQL instead of the embedded one' },
  TREASURY_ADMIN_TOKEN: { meaning: 'the operator token (else generated and kept in `.treasury/`)' },
  TREASURY_PUBLIC_URL: { meaning: "the API's public origin", default: '`http://<host>:<port>`' },
};
