/**
 * The identity store over PostgreSQL (./identity-store.ts says what each method means): nonces, identities,
 * sign-in's platform account row and sessions. A unit is a knex transaction (src/api/db/store-unit.ts).
 *
 * Defends: two sign-ins naming the same identity racing (an advisory lock per identity, taken in the order
 * given; a second link of one identity is refused by its primary key). Does not defend: the order of the
 * locks (the caller sorts them).
 */
import type { Knex } from 'knex';
import { readParent } from '../../auth/lineage-parent.js';
import { revokeSubtree } from '../../auth/revoke-lineage.js';
import { pgUnitRunner, trxOf } from '../../db/store-unit.js';
import type { IdentityStore } from './identity-store.js';

export function pgIdentityStore(knex: Knex): IdentityStore {
  return { ...pgUnitRunner(knex), ...pgSignInRows(knex), ...pgSessionRows() };
}

/** Nonces, identities and the platform account a first sign-in makes. */
function pgSignInRows(knex: Knex): Omit<IdentityStore, keyof SessionRows | 'inUnit'> {
  return {
    async insertNonce(nonce, expiresAt) {
      await knex('identity_nonces').insert({ nonce, expires_at: expiresAt });
    },
    purgeDeadNonces: (now, limit) =>
      knex('identity_nonces')
        .whereIn(
          'nonce',
          knex('identity_nonces')
            .select('nonce')
            .where((q) => q.where('expires_at', '<=', now).orWhereNotNull('used_at'))
            .limit(limit)
            .forUpdate()
            .skipLocked(),
        )
        .delete(),
    async consumeNonce(unit, nonce, now) {
      const consumed = await trxOf(unit)('identity_nonces')
        .where({ nonce })
        .whereNull('used_at')
        .andWhere('expires_at', '>', now)
        .update({ used_at: now });
      return consumed > 0;
    },
    async lockIdentities(unit, keys) {
      for (const key of keys)
        await trxOf(unit).raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 11))', [
          `identity:${key.chain}:${key.address}`,
        ]);
    },
    async findIdentities(unit, keys) {
      return (await trxOf(unit)('identities')
        .where((q) => {
          for (const key of keys) q.orWhere({ ...key });
        })
        .select('chain', 'address', 'account_id')) as Array<{ chain: string; address: string; account_id: string }>;
    },
    async createAccount(unit, accountId, now) {
      await trxOf(unit)('accounts').insert({ id: accountId, created_at: now });
    },
    async touchIdentity(unit, key, now) {
      await trxOf(unit)('identities')
        .where({ ...key })
        .update({ last_sign_in_at: now });
    },
    async linkIdentity(unit, key, accountId, at) {
      try {
        await trxOf(unit)('identities').insert({
          ...key,
          account_id: accountId,
          created_at: at.now,
          last_sign_in_at: at.now,
          linked_at: at.linkedAt,
        });
        return true;
      } catch (err) {
        if ((err as { code?: string }).code === '23505') return false;
        throw err;
      }
    },
    async agent(agentId) {
      return (await knex('agents').where({ id: agentId }).first('id', 'account_id')) as
        { id: string; account_id: string } | undefined;
    },
  };
}

type SessionRows = Pick<
  IdentityStore,
  | 'insertSession'
  | 'lockCredential'
  | 'parentOf'
  | 'liveSessionsBeyond'
  | 'unrevokedSessionsOf'
  | 'endSession'
  | 'revokeTree'
>;

/** Sessions: issued, bounded per PAT, ended with what was made within them (each in its caller's unit). */
function pgSessionRows(): SessionRows {
  return {
    async insertSession(unit, s) {
      await trxOf(unit)('api_tokens').insert({
        id: s.id,
        token_hash: s.tokenHash,
        kind: 'session',
        scope_type: s.scopeType,
        scope_id: s.scopeId,
        account_id: s.accountId,
        session_origin: s.origin,
        parent_token_id: s.parentId,
        created_by: s.createdBy,
        created_at: s.createdAt,
        expires_at: s.expiresAt,
        sign_in_message: s.signInProof?.message ?? null,
        sign_in_signature: s.signInProof?.signature ?? null,
      });
    },
    async lockCredential(unit, tokenId) {
      return Boolean(await trxOf(unit)('api_tokens').where({ id: tokenId }).forUpdate().first('id'));
    },
    parentOf: async (unit, tokenId, now) => (await readParent(trxOf(unit), tokenId, now)).parent,
    async liveSessionsBeyond(unit, patId, now, keep) {
      const rows = (await trxOf(unit)('api_tokens')
        .where({ parent_token_id: patId, kind: 'session' })
        .whereNull('revoked_at')
        .where((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now))
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .offset(keep)
        .select('id')) as Array<{ id: string }>;
      return rows.map((r) => r.id);
    },
    async unrevokedSessionsOf(unit, accountId) {
      const rows = (await trxOf(unit)('api_tokens')
        .where({ account_id: accountId, kind: 'session' })
        .whereNull('revoked_at')
        .select('id')) as Array<{ id: string }>;
      return rows.map((r) => r.id);
    },
    async endSession(unit, sessionId, now) {
      const trx = trxOf(unit);
      const [row] = (await trx('api_tokens')
        .where({ id: sessionId, kind: 'session' })
        .update({ revoked_at: trx.raw('COALESCE(revoked_at, ?)', [now]) })
        .returning(['id', 'revoked_at'])) as Array<{ id: string; revoked_at: Date }>;
      return row;
    },
    revokeTree: (unit, rootIds, at) => revokeSubtree(trxOf(unit), rootIds, at),
  };
}
