/**
 * `xx mcp`'s answer to a purchase past the buyer SDK's seller deadline (`SellerTimeoutError`): `seller_timeout`
 * with the bound and whether the payment was sent in its details, and words a model can act on — sent, pay again
 * with the same purchase_id (that same payment, never a second); not sent, nothing was paid. The abort behind it
 * (the cause) is not shown.
 */
import assert from 'node:assert/strict';
import { refusalOf } from '../../../src/cli/commands/mcp/tool-results.js';
import { SellerTimeoutError } from '../../../src/sdk/index.js';

describe('xx mcp: a seller past the deadline is a seller_timeout refusal', () => {
  const cause = new DOMException('internal detail of the abort', 'TimeoutError');

  it('sent: details say so, and the next step is the same purchase_id', () => {
    const r = refusalOf(new SellerTimeoutError(120_000, true, cause));
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent?.error_code, 'seller_timeout');
    assert.deepEqual(r.structuredContent?.details, { timeout_ms: 120_000, payment_sent: true });
    assert.match(String(r.structuredContent?.user_message), /within 120 s\. .*same purchase_id.*never a second/);
    const text = r.content.map((c) => ('text' in c ? c.text : '')).join('\n');
    assert.ok(!text.includes('internal detail'), 'the cause is not shown');
  });

  it('not sent: nothing was paid', () => {
    const r = refusalOf(new SellerTimeoutError(5_000, false, cause));
    assert.deepEqual(r.structuredContent?.details, { timeout_ms: 5_000, payment_sent: false });
    assert.match(String(r.structuredContent?.user_message), /within 5 s\. Nothing was paid\./);
  });
});
