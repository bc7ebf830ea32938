/**
 * The `xx mcp` outputSchema builder (src/cli/commands/mcp/tool-output.ts) and check_policy's headroom
 * (src/cli/commands/mcp/policy-headroom.ts), pure: the schema takes an answer or a refusal and nothing in
 * between (the server's check refuses half an answer); the MCP SDK's validating client, in process, refuses a refusal against an answer-only schema and
 * accepts it against the built one; headroom means the room before this payment, allowed or refused.
 */
import assert from 'node:assert/strict';
// eslint-disable-next-line import-x/no-unresolved -- the SDK's "./*" export maps types to *.js.d.ts, which this resolver cannot follow (tsc can)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
// eslint-disable-next-line import-x/no-unresolved -- as above
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
// eslint-disable-next-line import-x/no-unresolved -- as above
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { headroomBeforePayment, tightestUsd } from '../../../src/cli/commands/mcp/policy-headroom.js';
import { toolOutputSchema } from '../../../src/cli/commands/mcp/tool-output.js';
import { toolOk, toolRefusal } from '../../../src/cli/commands/mcp/tool-results.js';

const answer = z.object({ wallet_id: z.string(), stale: z.boolean(), note: z.string().optional() });
const refusal = { error_code: 'invalid_token', user_message: 'The PAT was revoked.', recovery: { kind: 'x' } };

describe('toolOutputSchema: an answer or a refusal', () => {
  const schema = toolOutputSchema(answer);

  it('accepts a whole answer and a refusal, not half of either or an unknown key', () => {
    assert.equal(schema.safeParse({ wallet_id: 'w', stale: false }).success, true);
    assert.equal(schema.safeParse(refusal).success, true);
    assert.equal(schema.safeParse({ wallet_id: 'w' }).success, false);
    assert.equal(schema.safeParse({ user_message: 'no code' }).success, false);
    assert.deepEqual(z.toJSONSchema(schema, { io: 'output' }).anyOf, [
      { required: ['wallet_id', 'stale'] },
      { required: ['error_code', 'user_message'] },
    ]);
    assert.equal(z.toJSONSchema(schema, { io: 'output' }).additionalProperties, false);
  });

  it("refuses an answer whose key would shadow a refusal's", () => {
    assert.throws(() => toolOutputSchema(z.object({ error_code: z.number() })), /shadow/);
  });

  it('the SDK client validates a refusal too: an answer-only schema fails, the built one passes', async () => {
    const server = new McpServer({ name: 't', version: '0' });
    server.registerTool('answer_only', { outputSchema: answer }, () => toolRefusal(refusal));
    server.registerTool('built', { outputSchema: schema }, () => toolRefusal(refusal));
    server.registerTool('half', { outputSchema: schema }, () => toolOk({ wallet_id: 'w' }));
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: 'test', version: '0' });
    await client.connect(b);
    try {
      await client.listTools();
      await assert.rejects(client.callTool({ name: 'answer_only', arguments: {} }), /output schema/);
      assert.equal((await client.callTool({ name: 'built', arguments: {} })).isError, true);
      // Half an answer is caught by the server's own check before it leaves.
      const half = (await client.callTool({ name: 'half', arguments: {} })) as { isError?: boolean; content: any[] };
      assert.equal(half.isError, true);
      assert.match(half.content[0].text, /Output validation error/);
    } finally {
      await client.close();
    }
  });
});

describe("check_policy's headroom: the room before this payment", () => {
  const engineAfter = {
    per_tx_usd: '1',
    daily_usd: '4.75',
    weekly_usd: '9.75',
    velocity_remaining: 8,
    cooling_off_remaining_seconds: 30,
  };

  it('gives an allowed payment back: windows plus its amount, one more payment, no cooling-off wait', () => {
    assert.deepEqual(headroomBeforePayment(engineAfter, true, '0.25'), {
      per_tx_usd: '1',
      daily_usd: '5',
      weekly_usd: '10',
      velocity_remaining: 9,
      cooling_off_remaining_seconds: 0,
    });
  });

  it('keeps a refused payment’s figures (nothing was counted)', () => {
    assert.deepEqual(headroomBeforePayment(engineAfter, false, '0.25'), engineAfter);
  });

  it('headroom_usd is the least dollar figure, null without one', () => {
    assert.equal(tightestUsd({ per_tx_usd: '1', daily_usd: '0.5', monthly_usd: '7' }), '0.5');
    assert.equal(tightestUsd({ velocity_remaining: 3 }), null);
  });
});
