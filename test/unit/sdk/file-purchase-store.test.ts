/**
 * The buyer SDK's purchase stores (src/sdk/file-purchase-store.ts, src/sdk/purchase-store.ts): records
 * round-trip through their schema; files are 0600 in a 0700 directory, named by the key's SHA-256 (a key never
 * steers a path); the bound refuses a new purchase when live ones fill it, after removing expired ones; a
 * file that is not a record is an error naming it, never read as absent, while fields a newer version added are
 * dropped on reading (a known field out of shape is still an error); both hold at most
 * MAX_LIVE_PURCHASES_PER_ORIGIN live purchases per origin, refusing only a new one to a full origin.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  filePurchaseStore,
  MAX_LIVE_PURCHASES_PER_ORIGIN,
  memoryPurchaseStore,
  PurchaseOriginLimitError,
  PurchaseStoreError,
  type PurchaseStore,
  type StoredPurchase,
} from '../../../src/sdk/index.js';
import { signedFor } from './scripted-http.js';
import { requirements } from '../x402/x402-fixtures.js';
import { fileTempDir } from '../../support/temp-dirs.js';

const NOW = 1_800_000_000_000;
const record = (expiresAt = NOW + 60_000): StoredPurchase => ({
  paymentId: `pay_${'0'.repeat(32)}`,
  createdAt: NOW,
  expiresAt,
});

describe('buyer SDK purchase stores', () => {
  it('a file store keeps each purchase in a 0600 file named by the SHA-256 of its key, in a 0700 directory', async () => {
    const dir = path.join(fileTempDir('purchases-'), 'p');
    const store = filePurchaseStore({ dir, now: () => NOW });
    const key = '../../etc/passwd';
    await store.put(key, record());
    const name = `${createHash('sha256').update(key).digest('hex')}.json`;
    assert.deepEqual(fs.readdirSync(dir), [name]);
    assert.equal(fs.statSync(path.join(dir, name)).mode & 0o777, 0o600);
    assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
    assert.deepEqual(await store.get(key), record());
    assert.equal(await store.get('another'), undefined);
    await store.delete(key);
    assert.equal(await store.get(key), undefined);
    await store.delete(key);
  });

  it('refuses a new purchase when live ones fill it, after removing the expired ones', async () => {
    const dir = fileTempDir('purchases-');
    const store = filePurchaseStore({ dir, maxPurchases: 2, now: () => NOW });
    await store.put('a', record());
    await store.put('b', record(NOW - 1));
    await store.put('c', record()); // b had expired: removed
    assert.equal(await store.get('b'), undefined);
    await assert.rejects(store.put('d', record()), PurchaseStoreError);
    await store.put('a', record(NOW + 5)); // an update of a live one is not a new purchase
    assert.throws(() => filePurchaseStore({ dir, maxPurchases: 0 }), PurchaseStoreError);
    assert.throws(() => filePurchaseStore({ dir, maxPurchases: 5000 }), PurchaseStoreError);
  });

  it('a file that is not a record is an error naming it, until it is removed', async () => {
    const dir = fileTempDir('purchases-');
    const store = filePurchaseStore({ dir, now: () => NOW });
    await store.put('k', record());
    const [name] = fs.readdirSync(dir);
    for (const text of ['not json', '{"paymentId":"x"}', 'x'.repeat(70_000)]) {
      fs.writeFileSync(path.join(dir, name!), text);
      await assert.rejects(store.get('k'), (err: unknown) => {
        assert.ok(err instanceof PurchaseStoreError);
        assert.ok(err.message.includes(name!), err.message);
        return true;
      });
    }
    await store.delete('k');
    assert.equal(await store.get('k'), undefined);
    await assert.rejects(store.put('k', { ...record(), paymentId: 'short' }));
  });

  it('a record a newer buyer wrote is read without the fields this one does not know; a known field out of shape is not', async () => {
    const dir = fileTempDir('purchases-');
    const store = filePurchaseStore({ dir, now: () => NOW });
    const signedRecord: StoredPurchase = {
      ...record(),
      origin: 'http://127.0.0.1:4001',
      signed: { requirements: requirements(), paymentHeader: 'x', terms: { ...signedFor(requirements()) } },
    };
    await store.put('k', signedRecord);
    const [name] = fs.readdirSync(dir);
    const file = path.join(dir, name!);
    const written = JSON.parse(fs.readFileSync(file, 'utf8'));
    // What a newer version might add beside the fields this one knows, at the top and in the signed payment.
    fs.writeFileSync(
      file,
      JSON.stringify({ ...written, boundOrigin: 'x', signed: { ...written.signed, receivedAt: 1, more: { a: 1 } } }),
    );
    assert.deepEqual(await store.get('k'), signedRecord);
    await store.put('k2', (await store.get('k'))!); // what was read is a record this version writes

    for (const broken of [
      { ...written, expiresAt: 'later', boundOrigin: 'x' },
      { ...written, origin: 'o'.repeat(513) },
      { ...written, signed: { ...written.signed, paymentHeader: 42, receivedAt: 1 } },
      { ...written, signed: { ...written.signed, requirements: undefined } },
    ]) {
      fs.writeFileSync(file, JSON.stringify(broken));
      await assert.rejects(store.get('k'), PurchaseStoreError, JSON.stringify(broken).slice(0, 80));
    }
    // Written by this version, a record is still held to the strict shape.
    await assert.rejects(store.put('k3', { ...record(), boundOrigin: 'x' } as StoredPurchase));
  });

  it('the memory store holds at most 1024 live purchases, forgetting expired ones first', async () => {
    let now = NOW;
    const store = memoryPurchaseStore(() => now);
    for (let i = 0; i < 1024; i++) await store.put(`k${i}`, record(NOW + 10));
    await assert.rejects(store.put('one more', record()), PurchaseStoreError);
    now = NOW + 10;
    await store.put('one more', record(NOW + 60_000));
    assert.equal(await store.get('k0'), undefined);
  });

  describe('at most MAX_LIVE_PURCHASES_PER_ORIGIN live purchases per origin', () => {
    const A = 'http://127.0.0.1:4001';
    const B = 'http://127.0.0.1:4002';
    const at = (origin: string, expiresAt = NOW + 60_000): StoredPurchase => ({ ...record(expiresAt), origin });
    const signed = (origin: string): StoredPurchase => ({
      ...at(origin),
      signed: { requirements: requirements(), paymentHeader: 'x', terms: { ...signedFor(requirements()) } },
    });

    async function walk(store: PurchaseStore, setNow: (t: number) => void): Promise<void> {
      for (let i = 0; i < MAX_LIVE_PURCHASES_PER_ORIGIN - 1; i++) await store.put(`a${i}`, at(A));
      await store.put('a-first-to-expire', at(A, NOW + 10));
      await store.put('old', record()); // kept before the origin was: counts toward none
      await assert.rejects(store.put('a-more', at(A)), (err: unknown) => {
        assert.ok(err instanceof PurchaseOriginLimitError);
        assert.equal(err.code, 'purchase_origin_limit_reached');
        assert.deepEqual(err.details, {
          origin: A,
          limit: MAX_LIVE_PURCHASES_PER_ORIGIN,
          retry_at: new Date(NOW + 10).toISOString(),
        });
        return true;
      });
      assert.equal(await store.get('a-more'), undefined);
      await store.put('b0', at(B)); // another origin is not touched
      await store.put('a0', signed(A)); // a purchase's signed payment, on its own key, is never refused
      await store.put('a-signed-elsewhere', signed(A)); // nor one written under a new key (it was counted when opened)
      await store.delete('a-signed-elsewhere');
      setNow(NOW + 10); // the first one can no longer settle: room for one more
      await store.put('a-more', at(A));
      await assert.rejects(store.put('a-one-too-many', at(A)), PurchaseOriginLimitError);
    }

    it('the memory store', async () => {
      let now = NOW;
      await walk(
        memoryPurchaseStore(() => now),
        (t) => (now = t),
      );
    });

    it('the file store', async () => {
      let now = NOW;
      await walk(filePurchaseStore({ dir: fileTempDir('purchases-'), now: () => now }), (t) => (now = t));
    });
  });
});
