/**
 * The buyer SDK's purchase stores (src/sdk/file-purchase-store.ts, src/sdk/purchase-store.ts): records
 * round-trip through their schema; files are 0600 in a 0700 directory, named by the key's SHA-256 (a key never
 * steers a path); the bound refuses a new purchase when live ones fill it, after removing expired ones; a
 * file that is not a record is an error naming it, never read as absent.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  filePurchaseStore,
  memoryPurchaseStore,
  PurchaseStoreError,
  type StoredPurchase,
} from '../../../src/sdk/index.js';
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

  it('the memory store holds at most 1024 live purchases, forgetting expired ones first', async () => {
    let now = NOW;
    const store = memoryPurchaseStore(() => now);
    for (let i = 0; i < 1024; i++) await store.put(`k${i}`, record(NOW + 10));
    await assert.rejects(store.put('one more', record()), PurchaseStoreError);
    now = NOW + 10;
    await store.put('one more', record(NOW + 60_000));
    assert.equal(await store.get('k0'), undefined);
  });
});
