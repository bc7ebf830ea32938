/**
 * The bound on agents per account (TREASURY_MAX_AGENTS_PER_ACCOUNT, 3 here; src/api/platform/agent-bounds.ts)
 * through HTTP, the real SoftHSM signer and PostgreSQL: an account's default agent counts, spawns on POST /v1/agents
 * pass up to the bound, then 409 `agent_limit_reached` with `limit` and nothing made; another account is unaffected;
 * spawns fired at once never pass the bound (they count under the account's lock).
 */
import assert from 'node:assert/strict';
import { useTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';

const LIMIT = 3;

const spawn = (t: TestTreasury, session: string, label: string) =>
  t.request('POST', '/v1/agents', { token: session, body: { label } });

/** The account's agents, and the Treasury accounts they hold, as the database has them. */
async function agentsOf(t: TestTreasury, accountId: string) {
  const agents = await t.db.knex('agents').where({ account_id: accountId }).pluck('treasury_account_id');
  const treasuries = await t.db.knex('treasury_accounts').whereIn('id', agents).count({ n: '*' }).first();
  return { agents: agents.length, treasuries: Number(treasuries?.n) };
}

describe('agents per account (HTTP, SoftHSM signer, PostgreSQL)', function () {
  this.timeout(180_000);
  const t = useTestTreasury({ extraEnv: { TREASURY_MAX_AGENTS_PER_ACCOUNT: String(LIMIT) } });

  it('spawns up to the bound (the default agent counts), then 409 agent_limit_reached; another account is unaffected', async () => {
    const me = await signInWithNewKey(t);
    for (let i = 1; i < LIMIT; i++) {
      const res = await spawn(t, me.session, `agent ${i}`);
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    const refused = await spawn(t, me.session, 'one too many');
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.deepEqual([refused.body.error_code, refused.body.limit], ['agent_limit_reached', LIMIT]);
    assert.deepEqual(await agentsOf(t, me.account_id), { agents: LIMIT, treasuries: LIMIT }, 'nothing made');
    const listed = await t.request('GET', '/v1/agents', { token: me.session });
    assert.equal(listed.body.agents.length, LIMIT);

    const other = await signInWithNewKey(t);
    const theirs = await spawn(t, other.session, 'theirs');
    assert.equal(theirs.status, 201, `another account spawns: ${JSON.stringify(theirs.body)}`);
  });

  it('spawns fired at once never pass the bound', async () => {
    const me = await signInWithNewKey(t);
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => spawn(t, me.session, `burst ${i}`)));
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [201, 201, 409, 409, 409, 409], JSON.stringify(answers.map((a) => a.body)));
    for (const a of answers.filter((x) => x.status === 409)) assert.equal(a.body.error_code, 'agent_limit_reached');
    assert.deepEqual(await agentsOf(t, me.account_id), { agents: LIMIT, treasuries: LIMIT });
  });
});
