/**
 * The merchant-of-record money flow (docs/adr/0011-merchant-of-record.md):
 * - `platform_collection_wallets`: per seller and network, the platform wallet (a Treasury wallet of the
 *   platform's own account, key in the HSM/KMS) a `platform_mor` seller's buyers pay, with what reached it
 *   (`collected_micro`, kept by a trigger when a ledger row paying it is verified) and what was paid out of it
 *   (`paid_micro`, kept by triggers on payouts). CHECK platform_collection_paid_within_collected: PostgreSQL
 *   refuses a payout above what the wallet collected, whoever writes it.
 * - `payout_flushes` become payouts with a state: `recorded` (a row written before payouts were transfers:
 *   no money moved), `pending` → `submitted` (signed by the collection wallet, handed to the facilitator) →
 *   `settled` (mined, `tx_hash`) or `failed` (the authorization expired unused: what it held is given back).
 *   Amount, seller, wallet and network of a payout never change; settled, failed and recorded are final.
 *   One payout per (seller, Idempotency-Key); one payout per transaction.
 * - `ledger_entries.nonce`: the authorization nonce a seller's report names. A row is linked to a Treasury
 *   authorization (`authorization_id`) only once the chain shows that authorization's own transfer; links
 *   made on a report's word before this migration are dropped (their nonce is kept, nothing re-links them).
 * - One platform account: a partial unique index on treasury_accounts (owner_type = 'platform').
 * - What was owed before this migration came from rows verified against the sellers' own addresses: no money
 *   of theirs ever reached the platform. It is owed no more (`earned_micro = paid_micro`); payouts already
 *   recorded stay recorded, and the advance of 20261125200400 is kept.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('platform_collection_wallets', (t) => {
    t.string('seller_id', 40).notNullable().references('id').inTable('sellers');
    t.string('network', 64).notNullable();
    t.string('wallet_id', 40).notNullable().unique().references('id').inTable('wallets');
    t.specificType('address', 'char(42)').notNullable(); // lower-case
    t.bigInteger('collected_micro').notNullable().defaultTo(0);
    t.bigInteger('paid_micro').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.primary(['seller_id', 'network']);
    t.unique(['network', 'address']);
  });
  await knex.raw(
    `ALTER TABLE platform_collection_wallets ADD CONSTRAINT platform_collection_paid_within_collected CHECK (paid_micro >= 0 AND paid_micro <= collected_micro)`,
  );
  await knex.raw(
    `CREATE UNIQUE INDEX treasury_accounts_one_platform ON treasury_accounts (owner_type, owner_id) WHERE owner_type = 'platform'`,
  );

  await knex.raw('LOCK TABLE ledger_entries, payout_flushes, seller_payables IN SHARE ROW EXCLUSIVE MODE');
  await knex.raw('UPDATE seller_payables SET earned_micro = paid_micro WHERE earned_micro > paid_micro');

  await knex.schema.alterTable('ledger_entries', (t) => {
    t.specificType('nonce', 'char(66)');
  });
  await knex.raw(`
    UPDATE ledger_entries l SET nonce = a.nonce, authorization_id = NULL, decision_id = NULL
      FROM authorizations a WHERE a.id = l.authorization_id`);

  await knex.schema.alterTable('payout_flushes', (t) => {
    t.string('status', 16).notNullable().defaultTo('recorded');
    t.string('network', 64);
    t.string('wallet_id', 40).references('id').inTable('wallets');
    t.specificType('pay_to', 'char(42)');
    t.string('authorization_id', 40);
    t.specificType('tx_hash', 'char(66)');
    t.string('reason', 64);
    t.string('idempotency_key', 128);
    t.timestamp('updated_at', { useTz: true });
    t.timestamp('settled_at', { useTz: true });
  });
  await knex.raw(`
    ALTER TABLE payout_flushes ADD CONSTRAINT payout_flushes_status_check
      CHECK (status IN ('recorded', 'pending', 'submitted', 'settled', 'failed'));
    ALTER TABLE payout_flushes ADD CONSTRAINT payout_flushes_transfer_shape
      CHECK (status = 'recorded' OR (wallet_id IS NOT NULL AND network IS NOT NULL));
    ALTER TABLE payout_flushes ADD CONSTRAINT payout_flushes_settled_has_tx
      CHECK (status <> 'settled' OR tx_hash IS NOT NULL);
    CREATE UNIQUE INDEX payout_flushes_idempotency ON payout_flushes (seller_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
    CREATE UNIQUE INDEX payout_flushes_tx ON payout_flushes (network, tx_hash) WHERE tx_hash IS NOT NULL;
    CREATE INDEX payout_flushes_unfinished ON payout_flushes (seller_id) WHERE status IN ('pending', 'submitted');
  `);

  await knex.raw(`
    CREATE FUNCTION platform_collection_collected() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE platform_collection_wallets SET collected_micro = collected_micro + NEW.amount_micro
       WHERE seller_id = NEW.seller_id AND network = NEW.network;
      RETURN NULL;
    END $$;
    CREATE TRIGGER ledger_entries_collected AFTER INSERT ON ledger_entries
      FOR EACH ROW WHEN (NEW.payout_mode = 'platform_mor' AND NEW.status = 'verified') EXECUTE FUNCTION platform_collection_collected();
    CREATE TRIGGER ledger_entries_collected_verified AFTER UPDATE OF status ON ledger_entries
      FOR EACH ROW WHEN (OLD.status <> 'verified' AND NEW.status = 'verified' AND NEW.payout_mode = 'platform_mor')
      EXECUTE FUNCTION platform_collection_collected();

    CREATE FUNCTION platform_collection_paid() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE platform_collection_wallets SET paid_micro = paid_micro + NEW.amount_micro WHERE wallet_id = NEW.wallet_id;
      IF NOT FOUND THEN
        RAISE EXCEPTION 'a payout must come out of a collection wallet (%)', NEW.id USING ERRCODE = 'check_violation';
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER payout_flushes_collection_paid AFTER INSERT ON payout_flushes
      FOR EACH ROW WHEN (NEW.wallet_id IS NOT NULL) EXECUTE FUNCTION platform_collection_paid();

    CREATE FUNCTION payout_flushes_given_back() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE platform_collection_wallets SET paid_micro = paid_micro - NEW.amount_micro WHERE wallet_id = NEW.wallet_id;
      UPDATE seller_payables SET paid_micro = paid_micro - NEW.amount_micro WHERE seller_id = NEW.seller_id;
      RETURN NULL;
    END $$;
    CREATE TRIGGER payout_flushes_failed AFTER UPDATE OF status ON payout_flushes
      FOR EACH ROW WHEN (OLD.status <> 'failed' AND NEW.status = 'failed') EXECUTE FUNCTION payout_flushes_given_back();

    CREATE FUNCTION payout_flushes_state_machine() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.amount_micro IS DISTINCT FROM OLD.amount_micro OR NEW.seller_id IS DISTINCT FROM OLD.seller_id
         OR NEW.wallet_id IS DISTINCT FROM OLD.wallet_id OR NEW.network IS DISTINCT FROM OLD.network
         OR NEW.created_at IS DISTINCT FROM OLD.created_at THEN
        RAISE EXCEPTION 'a payout''s amount, seller, wallet and network are fixed (%)', OLD.id USING ERRCODE = 'check_violation';
      END IF;
      IF OLD.status IN ('recorded', 'settled', 'failed') AND NEW.status IS DISTINCT FROM OLD.status
         OR OLD.status = 'pending' AND NEW.status NOT IN ('pending', 'submitted', 'failed')
         OR OLD.status = 'submitted' AND NEW.status NOT IN ('submitted', 'settled', 'failed') THEN
        RAISE EXCEPTION 'a payout goes pending -> submitted -> settled or failed (%: % -> %)', OLD.id, OLD.status, NEW.status
          USING ERRCODE = 'check_violation';
      END IF;
      IF OLD.status IN ('settled', 'recorded', 'failed') AND (NEW.tx_hash IS DISTINCT FROM OLD.tx_hash OR NEW.pay_to IS DISTINCT FROM OLD.pay_to) THEN
        RAISE EXCEPTION 'a finished payout is final (%)', OLD.id USING ERRCODE = 'check_violation';
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER payout_flushes_state_machine BEFORE UPDATE ON payout_flushes
      FOR EACH ROW EXECUTE FUNCTION payout_flushes_state_machine();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER payout_flushes_state_machine ON payout_flushes;
    DROP FUNCTION payout_flushes_state_machine();
    DROP TRIGGER payout_flushes_failed ON payout_flushes;
    DROP FUNCTION payout_flushes_given_back();
    DROP TRIGGER payout_flushes_collection_paid ON payout_flushes;
    DROP FUNCTION platform_collection_paid();
    DROP TRIGGER ledger_entries_collected ON ledger_entries;
    DROP TRIGGER ledger_entries_collected_verified ON ledger_entries;
    DROP FUNCTION platform_collection_collected();
    DROP INDEX payout_flushes_unfinished;
    DROP INDEX payout_flushes_tx;
    DROP INDEX payout_flushes_idempotency;
    ALTER TABLE payout_flushes DROP CONSTRAINT payout_flushes_settled_has_tx;
    ALTER TABLE payout_flushes DROP CONSTRAINT payout_flushes_transfer_shape;
    ALTER TABLE payout_flushes DROP CONSTRAINT payout_flushes_status_check;
  `);
  await knex.schema.alterTable('payout_flushes', (t) => {
    t.dropColumns(
      'status',
      'network',
      'wallet_id',
      'pay_to',
      'authorization_id',
      'tx_hash',
      'reason',
      'idempotency_key',
      'updated_at',
      'settled_at',
    );
  });
  await knex.schema.alterTable('ledger_entries', (t) => t.dropColumn('nonce'));
  await knex.raw('DROP INDEX treasury_accounts_one_platform');
  await knex.schema.dropTableIfExists('platform_collection_wallets');
}
