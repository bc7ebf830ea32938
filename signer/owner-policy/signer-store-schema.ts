/**
 * The schema of the signer's own store (./pg-owner-policy-store.ts), as knex migrations held in code: the
 * signer migrates its database itself at start, so it ships no migration folder and the API's migrations
 * never touch it. Add a migration to the list; never edit one that shipped.
 *
 * Defends: malformed rows — addresses are lower-case 0x hex or base58 (a Solana wallet, payee or owner's
 * authority), authority kinds and amounts are checked by the database too, so a row written by anything but the signer's code still cannot hold a negative spend or an
 * unknown kind. Does not defend: who may write — that is the database role only the signer holds.
 */
import type { Knex } from 'knex';

interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
}

const ADDRESS_CHECK = (column: string) => `${column} ~ '^0x[0-9a-f]{40}$'`;
/** An authority: a lower-case 0x address, or a Solana owner's base58 key (32 to 44 characters of its alphabet). */
const AUTHORITY_CHECK = (column: string) =>
  `${column} ~ '^0x[0-9a-f]{40}$' OR ${column} ~ '^[1-9A-HJ-NP-Za-km-z]{32,44}$'`;

const BASE58 = '1-9A-HJ-NP-Za-km-z';

/**
 * `column` of `min`..`max` characters after `prefix`, each of the class `chars`, as a length and an unbounded
 * class: the same strings as the bounded repeat `~ '^prefix[chars]{min,max}$'`, at a tenth of its cost (PostgreSQL's
 * regex engine builds a state per repeat on every row it checks, and every CHECK of a row runs on each insert and
 * each update). Migration 20261201100000 of the API's tables says more.
 */
function spelled(column: string, prefix: string, chars: string, min: number, max = min): string {
  const length = min === max ? `= ${prefix.length + min}` : `BETWEEN ${prefix.length + min} AND ${prefix.length + max}`;
  return `(length(${column}) ${length} AND ${column} ~ '^${prefix}[${chars}]*$')`;
}

/**
 * The checks of the rows every payment writes (a spend; a signed wallet's row, whose counter each commit raises),
 * rewritten by 0007 from bounded repeats: table, constraint, and the rule given the form of one spelling
 * (test/integration/db/cheap-spelling-checks.test.ts holds both forms equal).
 */
export const SIGNER_SPELLING_CHECKS: ReadonlyArray<{
  table: string;
  name: string;
  rule: (s: typeof spelled) => string;
}> = [
  { table: 'signer_wallets', name: 'signer_wallets_address_check', rule: (s) => s('address', '0x', '0-9a-f', 40) },
  {
    table: 'signer_wallets',
    name: 'signer_wallets_authority_address_check',
    rule: (s) => `${s('authority_address', '0x', '0-9a-f', 40)} OR ${s('authority_address', '', BASE58, 32, 44)}`,
  },
  {
    table: 'signer_wallets',
    name: 'signer_wallets_policy_hash_check',
    rule: (s) => s('policy_hash', '0x', '0-9a-f', 64),
  },
  {
    table: 'signer_wallets',
    name: 'signer_wallets_policy_signature_check',
    rule: (s) => `${s('policy_signature', '0x', '0-9a-f', 130)} OR ${s('policy_signature', '0x', '0-9a-f', 128)}`,
  },
  { table: 'signer_spends', name: 'signer_spends_ref_check', rule: (s) => s('ref', '', '0-9a-f', 32) },
  { table: 'signer_spends', name: 'signer_spends_payee_check', rule: (s) => s('payee', '0x', '0-9a-f', 40) },
];

/** An address a wallet or a payee may have: lower-case 0x hex, or a Solana key's base58 (32 to 44 characters). */
const eitherAddress = (s: typeof spelled, column: string) =>
  `${s(column, '0x', '0-9a-f', 40)} OR ${s(column, '', BASE58, 32, 44)}`;

/** The checks 0009 widens to Solana wallets and payees (the same form as those of 0007, which it replaces). */
export const SIGNER_SOLANA_ADDRESS_CHECKS: typeof SIGNER_SPELLING_CHECKS = [
  { table: 'signer_wallets', name: 'signer_wallets_address_check', rule: (s) => eitherAddress(s, 'address') },
  { table: 'signer_spends', name: 'signer_spends_payee_check', rule: (s) => eitherAddress(s, 'payee') },
];

/** Replaces each check of `checks` by its rule, keeping its name: added NOT VALID, then validated. */
async function replaceChecks(knex: Knex, checks: typeof SIGNER_SPELLING_CHECKS): Promise<void> {
  for (const { table, name, rule } of checks) {
    await knex.raw(`ALTER TABLE ?? DROP CONSTRAINT ??, ADD CONSTRAINT ?? CHECK (${rule(spelled)}) NOT VALID`, [
      table,
      name,
      name,
    ]);
    await knex.raw('ALTER TABLE ?? VALIDATE CONSTRAINT ??', [table, name]);
  }
}

const MIGRATIONS: readonly Migration[] = [
  {
    name: '0001_owner_policies',
    async up(knex) {
      await knex.raw(`
        CREATE TABLE signer_accounts (
          account_key_hash text PRIMARY KEY CHECK (account_key_hash ~ '^[0-9a-f]{64}$'),
          authority_kind text NOT NULL CHECK (authority_kind IN ('owner', 'approver')),
          authority_address text NULL CHECK (${ADDRESS_CHECK('authority_address')}),
          proof text NULL CHECK (length(proof) <= 8192),
          created_at timestamptz NOT NULL DEFAULT now(),
          CHECK ((authority_kind = 'owner') = (authority_address IS NOT NULL))
        );
        CREATE TABLE signer_wallets (
          address text PRIMARY KEY CHECK (${ADDRESS_CHECK('address')}),
          account_key_hash text NULL,
          authority_kind text NULL CHECK (authority_kind IN ('owner', 'approver', 'first_signer')),
          authority_address text NULL CHECK (${ADDRESS_CHECK('authority_address')}),
          policy jsonb NULL,
          policy_version bigint NULL CHECK (policy_version > 0),
          policy_hash text NULL CHECK (policy_hash ~ '^0x[0-9a-f]{64}$'),
          policy_issued_at bigint NULL CHECK (policy_issued_at >= 0),
          policy_signature text NULL CHECK (policy_signature ~ '^0x[0-9a-f]{130}$'),
          created_at timestamptz NOT NULL DEFAULT now(),
          updated_at timestamptz NOT NULL DEFAULT now(),
          CHECK ((policy IS NULL) = (policy_version IS NULL)),
          CHECK (policy IS NULL OR authority_kind IS NOT NULL)
        );
        CREATE TABLE signer_policy_history (
          address text NOT NULL REFERENCES signer_wallets (address),
          version bigint NOT NULL CHECK (version > 0),
          policy jsonb NOT NULL,
          policy_hash text NOT NULL,
          issued_at bigint NOT NULL,
          signature text NOT NULL,
          authority_kind text NOT NULL,
          authority_address text NOT NULL,
          recorded_at timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (address, version)
        );
        CREATE TABLE signer_spends (
          id bigserial PRIMARY KEY,
          ref text NOT NULL UNIQUE CHECK (ref ~ '^[0-9a-f]{32}$'),
          address text NOT NULL REFERENCES signer_wallets (address),
          amount numeric(78, 0) NOT NULL CHECK (amount >= 0),
          payee text NOT NULL CHECK (${ADDRESS_CHECK('payee')}),
          signed_at timestamptz NOT NULL
        );
        CREATE INDEX signer_spends_by_wallet ON signer_spends (address, signed_at);
      `);
    },
  },
  {
    // Owners who signed in with Solana (SIWS): their base58 key as authority, their 64-byte Ed25519 signatures.
    name: '0003_ed25519_authorities',
    async up(knex) {
      await knex.raw(`
        ALTER TABLE signer_accounts DROP CONSTRAINT signer_accounts_authority_address_check,
          ADD CONSTRAINT signer_accounts_authority_address_check CHECK (${AUTHORITY_CHECK('authority_address')});
        ALTER TABLE signer_wallets DROP CONSTRAINT signer_wallets_authority_address_check,
          ADD CONSTRAINT signer_wallets_authority_address_check CHECK (${AUTHORITY_CHECK('authority_address')}),
          DROP CONSTRAINT signer_wallets_policy_signature_check,
          ADD CONSTRAINT signer_wallets_policy_signature_check
            CHECK (policy_signature ~ '^0x[0-9a-f]{130}$' OR policy_signature ~ '^0x[0-9a-f]{128}$');
        ALTER TABLE signer_policy_history
          ADD CONSTRAINT signer_policy_history_authority_address_check CHECK (${AUTHORITY_CHECK('authority_address')});
      `);
    },
  },
  {
    // A counter on each wallet row, raised by every statement that records spends of a wallet with a signed
    // policy: a decision made on a snapshot commits only if the counter (and the policy version) it read are
    // still the row's (./spend-statements.ts). A constant default: no table rewrite.
    name: '0004_wallet_spend_sequence',
    async up(knex) {
      await knex.raw(
        `ALTER TABLE signer_wallets ADD COLUMN spend_seq bigint NOT NULL DEFAULT 0 CHECK (spend_seq >= 0)`,
      );
    },
  },
  {
    // Each wallet's spends summed per UTC day, kept by triggers on signer_spends (every insert and delete, whatever
    // statement makes it), so that a decision reads a month's windows from at most 31 rows instead of every spend
    // since the month began (./spend-statements.ts `readSpendStates`). The per-spend rows stay: the velocity count,
    // the last payment and the audit read them. Rows are upserted in (address, day) order: no two statements
    // deadlock on them.
    name: '0005_spend_days',
    async up(knex) {
      await knex.raw(`
        CREATE TABLE signer_spend_days (
          address text NOT NULL REFERENCES signer_wallets (address),
          day date NOT NULL,
          amount numeric(78, 0) NOT NULL CHECK (amount >= 0),
          PRIMARY KEY (address, day)
        );
        INSERT INTO signer_spend_days (address, day, amount)
          SELECT address, (signed_at AT TIME ZONE 'UTC')::date, sum(amount) FROM signer_spends GROUP BY 1, 2;
        CREATE FUNCTION signer_spend_days_add() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO signer_spend_days (address, day, amount)
            SELECT address, (signed_at AT TIME ZONE 'UTC')::date, sum(amount) FROM added GROUP BY 1, 2 ORDER BY 1, 2
            ON CONFLICT (address, day) DO UPDATE SET amount = signer_spend_days.amount + excluded.amount;
          RETURN NULL;
        END $$;
        CREATE FUNCTION signer_spend_days_remove() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          UPDATE signer_spend_days d SET amount = d.amount - r.amount
            FROM (SELECT address, (signed_at AT TIME ZONE 'UTC')::date AS day, sum(amount) AS amount
                    FROM removed GROUP BY 1, 2 ORDER BY 1, 2) r
           WHERE d.address = r.address AND d.day = r.day;
          RETURN NULL;
        END $$;
        CREATE TRIGGER signer_spends_add_days AFTER INSERT ON signer_spends
          REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION signer_spend_days_add();
        CREATE TRIGGER signer_spends_remove_days AFTER DELETE ON signer_spends
          REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION signer_spend_days_remove();
      `);
    },
  },
  {
    // The order in which policies were accepted: a signer process reads the wallets whose policy changed since the
    // last number it saw, to keep its knowledge of wallets without a policy fresh (./open-spend-leases.ts).
    name: '0006_policy_history_sequence',
    async up(knex) {
      await knex.raw(`
        ALTER TABLE signer_policy_history ADD COLUMN seq bigserial;
        CREATE UNIQUE INDEX signer_policy_history_by_seq ON signer_policy_history (seq);
      `);
    },
  },
  {
    // The same spelling rules in a form PostgreSQL checks at a tenth of the cost (`spelled` above), each added NOT
    // VALID and then validated, keeping its name.
    name: '0007_cheap_spelling_checks',
    async up(knex) {
      await replaceChecks(knex, SIGNER_SPELLING_CHECKS);
    },
  },
  {
    // Each signed wallet's spend counter in a narrow row of its own, written by every commit of a signed wallet's
    // spends: raising it inside the wallet row copied that row (policy, signature, hash) into a new version and
    // checked its every spelling each time. A policy change raises it too, so a decision made on an older policy
    // fails its commit's check as one made on older spends does. A wallet gets its row when its first policy is
    // stored; the wallet row's own counter goes (a signer of an earlier version, still running, then fails its
    // statements rather than commit beside this one unseen). Half-full pages: room for an update beside each row.
    name: '0008_spend_counters',
    async up(knex) {
      await knex.raw(`
        CREATE TABLE signer_spend_counters (
          address text PRIMARY KEY REFERENCES signer_wallets (address),
          spend_seq bigint NOT NULL DEFAULT 0 CHECK (spend_seq >= 0)
        ) WITH (fillfactor = 50);
        INSERT INTO signer_spend_counters (address, spend_seq)
          SELECT address, spend_seq + 1 FROM signer_wallets WHERE policy IS NOT NULL;
        ALTER TABLE signer_wallets DROP COLUMN spend_seq;
      `);
    },
  },
  {
    // Solana wallets are kept too (docs/adr/0013-solana-keys.md): a wallet's address and a spend's payee may be
    // base58 (case-sensitive, kept as it is). Its rows hang off the wallet's address as the EVM wallets' do.
    name: '0009_solana_wallets',
    async up(knex) {
      await replaceChecks(knex, SIGNER_SOLANA_ADDRESS_CHECKS);
    },
  },
  {
    // The store's generation (./store-generation.ts): one row, raised by one in the transaction of every write that
    // binds trust (an account's authority, a wallet recorded, a signed policy accepted), so that a store restored from
    // an older snapshot is seen to be older than a signer process has seen it. A store that already holds rows starts
    // at their count, so a snapshot taken before this migration, with fewer of them, is older too.
    name: '0010_store_generation',
    async up(knex) {
      await knex.raw(`
        CREATE TABLE signer_store_generation (
          only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
          generation bigint NOT NULL CHECK (generation >= 0)
        );
        INSERT INTO signer_store_generation (generation)
          SELECT (SELECT count(*) FROM signer_accounts) + (SELECT count(*) FROM signer_wallets)
               + (SELECT count(*) FROM signer_policy_history);
      `);
    },
  },
  {
    // The EIP-712 form each accepted document's signature is over (policy/signed-policy.ts): the policy's hash, or its
    // text. Without it a kept signature could be checked again only by trying both forms. Every row before this one
    // is of the hash form (a constant default: no table rewrite); the text form is only ever a 65-byte signature's.
    name: '0011_policy_signature_form',
    async up(knex) {
      await knex.raw(`
        ALTER TABLE signer_policy_history
          ADD COLUMN signature_form text NOT NULL DEFAULT 'policy_hash'
            CHECK (signature_form IN ('policy_hash', 'policy_text')),
          ADD CONSTRAINT signer_policy_history_text_form_check
            CHECK (signature_form = 'policy_hash' OR length(signature) = 132);
      `);
    },
  },
];

/** knex's migration source over the list above. */
export const SIGNER_MIGRATIONS: Knex.MigrationSource<Migration> = {
  getMigrations: () => Promise.resolve([...MIGRATIONS]),
  getMigrationName: (migration) => migration.name,
  getMigration: (migration) => Promise.resolve({ up: migration.up, down: () => Promise.resolve() }),
};
