/**
 * Migration 20261201100000 (cheap spelling checks) and the signer store's 0007 (and 0009, its Solana addresses): each spelling rule rewritten from a
 * bounded repeat (`~ '^0x[0-9a-f]{40}$'`) to a length and an unbounded class accepts exactly the same values —
 * every atom of every rewritten constraint evaluated both ways by PostgreSQL over valid spellings at each length,
 * one bad character at each place, look-alike characters, NULL, and every string of the hostile inputs — and
 * the stored constraints are the new, validated ones; down restores the bounded forms.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { CHECKS, bounded, spelled } from '../../../migrations/20261201100000_cheap_spelling_checks.js';
import {
  SIGNER_SOLANA_ADDRESS_CHECKS,
  SIGNER_SPELLING_CHECKS,
} from '../../../signer/owner-policy/signer-store-schema.js';
import { useTestDatabaseBefore } from '../../support/test-database.js';
import { migratedSignerStore } from '../signer/signer-test-helpers.js';

const MIGRATION = '20261201100000_cheap_spelling_checks.ts';
const SOLANA_WALLET = '2wmVCSfPxGPjrnMMn7rchp4uaeoTqN39mXFC2zhPdri9';
type Atom = [column: string, prefix: string, chars: string, min: number, max?: number];

/** Every spelling atom the rewritten rules use (each rule called with a form that records its arguments). */
function atoms(): Atom[] {
  const seen = new Map<string, Atom>();
  const record = (...atom: Atom) => {
    seen.set(JSON.stringify(atom.slice(1)), atom);
    return 'TRUE';
  };
  for (const { rule } of [...CHECKS, ...SIGNER_SPELLING_CHECKS, ...SIGNER_SOLANA_ADDRESS_CHECKS]) rule(record);
  return [...seen.values()];
}

/** Every string anywhere in the hostile inputs. */
function hostileStrings(): string[] {
  const file = path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json');
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(JSON.parse(fs.readFileSync(file, 'utf8')));
  // PostgreSQL text holds no NUL.
  return out.filter((s) => !s.includes('\0'));
}

/** The characters a bracket expression's inside (`0-9a-fA-F`) stands for. */
function expand(chars: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < chars.length; i++) {
    if (chars[i + 1] === '-' && i + 2 < chars.length) {
      for (let c = chars.charCodeAt(i); c <= chars.charCodeAt(i + 2); c++) out.push(String.fromCharCode(c));
      i += 2;
    } else out.push(chars[i]!);
  }
  return out;
}

/** Valid spellings at each length from min-1 to max+1, and each with one wrong character at each place. */
function corpus([, prefix, chars, min, max = min]: Atom): Array<string | null> {
  const allowed = expand(chars);
  const wrong = ['g', 'G', 'O', 'I', 'l', '0', 'x', ' ', '\n', '-', '_', 'é', '٣', 'Ａ', '\t', '$', '^', '.'].filter(
    (c) => !allowed.includes(c),
  );
  const values: Array<string | null> = [null, '', prefix, '0X', `${prefix}\n`];
  const lengths = [min - 1, min, min + 1, Math.floor((min + max) / 2), max - 1, max, max + 1].filter((n) => n >= 0);
  for (const n of lengths) {
    const body = Array.from({ length: n }, (_, i) => allowed[(i * 7 + n) % allowed.length]).join('');
    values.push(prefix + body, `${prefix + body}\n`, ` ${prefix}${body}`, prefix.toUpperCase() + body);
    for (let at = 0; at < n; at += Math.max(1, Math.floor(n / 6))) {
      for (const c of wrong.slice(0, 6)) values.push(prefix + body.slice(0, at) + c + body.slice(at + 1));
    }
  }
  for (const c of wrong) values.push(prefix + c.repeat(min));
  return values;
}

describe('cheap spelling checks (PostgreSQL)', function () {
  this.timeout(60_000);
  const db = useTestDatabaseBefore(MIGRATION);

  it('each rewritten atom accepts exactly what its bounded form accepts, NULL included', async () => {
    const client = new pg.Client(db.connectionString);
    await client.connect();
    try {
      const hostile = hostileStrings();
      assert.ok(hostile.length > 100, 'the hostile inputs were read');
      for (const atom of atoms()) {
        const values = [...corpus(atom), ...hostile];
        const [column, ...rest] = atom;
        const { rows } = await client.query<{ v: string | null; cheap: boolean | null; old: boolean | null }>(
          `SELECT ${column} AS v, ${spelled(column, ...rest)} AS cheap, ${bounded(column, ...rest)} AS old
             FROM unnest($1::text[]) AS t(${column})`,
          [values],
        );
        const differ = rows.filter((r) => r.cheap !== r.old);
        assert.deepEqual(differ, [], `${JSON.stringify(rest)}: the two forms differ`);
        assert.ok(rows.some((r) => r.old === true) && rows.some((r) => r.old === false), 'both outcomes were tried');
      }
    } finally {
      await client.end();
    }
  });

  it('up stores the cheap forms, validated; down the bounded ones; up again', async () => {
    const defs = async () => {
      const { rows } = await db.knex.raw<{ rows: Array<{ name: string; def: string; valid: boolean }> }>(
        `SELECT conname AS name, pg_get_constraintdef(oid) AS def, convalidated AS valid FROM pg_constraint
          WHERE conname = ANY(?)`,
        [CHECKS.map((c) => c.name)],
      );
      assert.equal(rows.length, CHECKS.length);
      return rows;
    };
    await db.knex.migrate.up();
    for (const r of await defs()) {
      assert.ok(r.valid, r.name);
      assert.doesNotMatch(r.def, /\{\d/, `${r.name} has no bounded repeat: ${r.def}`);
    }
    await db.knex.migrate.down();
    for (const r of await defs()) assert.match(r.def, /\{\d/, `${r.name} is bounded again`);
    await db.knex.migrate.up();
    for (const r of await defs()) assert.doesNotMatch(r.def, /\{\d/);
  });

  it("the signer's store migrates to the cheap forms, validated, and still refuses a bad spelling", async () => {
    const store = await migratedSignerStore();
    const client = new pg.Client(store.connectionString);
    try {
      await client.connect();
      const { rows } = await client.query<{ name: string; def: string; valid: boolean }>(
        `SELECT conname AS name, pg_get_constraintdef(oid) AS def, convalidated AS valid FROM pg_constraint
          WHERE conname = ANY($1)`,
        [SIGNER_SPELLING_CHECKS.map((c) => c.name)],
      );
      assert.equal(rows.length, SIGNER_SPELLING_CHECKS.length);
      for (const r of rows) {
        assert.ok(r.valid, r.name);
        assert.doesNotMatch(r.def, /\{\d/, `${r.name}: ${r.def}`);
      }
      await assert.rejects(
        client.query('INSERT INTO signer_wallets (address) VALUES ($1)', [`0x${'A'.repeat(40)}`]),
        /signer_wallets_address_check/,
      );
      await client.query('INSERT INTO signer_wallets (address) VALUES ($1)', [`0x${'a'.repeat(40)}`]);
      // 0009: a Solana wallet's base58 address too, and nothing outside its alphabet.
      await client.query('INSERT INTO signer_wallets (address) VALUES ($1)', [SOLANA_WALLET]);
      for (const bad of [
        `${SOLANA_WALLET.slice(0, -1)}0`,
        `${SOLANA_WALLET.slice(0, -1)}l`,
        '1'.repeat(31),
        '1'.repeat(45),
      ])
        await assert.rejects(
          client.query('INSERT INTO signer_wallets (address) VALUES ($1)', [bad]),
          /signer_wallets_address_check/,
          bad,
        );
    } finally {
      await client.end();
      await store.drop();
    }
  });
});
