/**
 * The tenant a Treasury account counts under (src/api/platform/treasury-tenant.ts): never waits — an account not yet
 * known counts as itself while its owner is looked up in the background, once at a time — then its agent's owner;
 * an operator-minted account (no owner) stays itself; a failed lookup is tried again at the next call.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { treasuryTenantOf } from '../../../src/api/platform/treasury-tenant.js';

describe('treasury tenant (the owner of an agent account, never waited for)', () => {
  it('answers at once, then the owner once learned; one lookup at a time; no owner: itself; a failure is retried', async () => {
    const asked: string[] = [];
    let failNext = true;
    const tenantOf = treasuryTenantOf(async (id) => {
      asked.push(id);
      await sleep(5);
      if (id === 'acct_flaky' && failNext) {
        failNext = false;
        throw new Error('pool exhausted');
      }
      return id === 'acct_minted' ? null : 'acc_owner';
    });
    assert.equal(tenantOf('acct_agent'), 'acct_agent', 'not known yet: itself, at once');
    assert.equal(tenantOf('acct_agent'), 'acct_agent');
    assert.deepEqual(asked, ['acct_agent'], 'one lookup at a time');
    await sleep(20);
    assert.equal(tenantOf('acct_agent'), 'acc_owner');
    tenantOf('acct_minted');
    tenantOf('acct_flaky');
    await sleep(20);
    assert.equal(tenantOf('acct_minted'), 'acct_minted');
    assert.equal(tenantOf('acct_flaky'), 'acct_flaky', 'the failed lookup is asked again');
    await sleep(20);
    assert.equal(tenantOf('acct_flaky'), 'acc_owner');
    assert.deepEqual(asked, ['acct_agent', 'acct_minted', 'acct_flaky', 'acct_flaky']);
  });
});
