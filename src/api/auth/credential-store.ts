/**
 * What the authenticator needs from storage: a credential's chain by the hash of its secret, and the one use
 * of a single-use credential. `pgCredentialStore` reads them from PostgreSQL (`api_tokens`), the
 * authenticator itself holds no database handle.
 *
 * Defends: a single-use credential used twice (the use is one conditional UPDATE: a second finds it used).
 * Does not defend: what a live chain may do (./authenticator.ts and ./session-powers.ts decide).
 */
import type { Knex } from 'knex';
import { readChain, type ChainRow } from './credential-chain.js';

export interface CredentialStore {
  /** The credential whose secret hashes to `tokenHash`, and every credential above it, nearest first. */
  chainByHash(tokenHash: string, kind: ChainRow['kind']): Promise<ChainRow[]>;
  /** Marks a single-use credential used at `now`; false when it already was. */
  consumeSingleUse(tokenId: string, now: Date): Promise<boolean>;
}

export function pgCredentialStore(knex: Knex): CredentialStore {
  return {
    chainByHash: (tokenHash, kind) => readChain(knex, { tokenHash, kind }),
    async consumeSingleUse(tokenId, now) {
      const consumed = await knex('api_tokens').where({ id: tokenId }).whereNull('used_at').update({ used_at: now });
      return consumed > 0;
    },
  };
}
