/**
 * The `xx mcp --http` bearer (src/cli/commands/mcp/mcp-http-bearer.ts) at its edges: a generated token is 32
 * random bytes in base64url and new each time (an empty XX_MCP_HTTP_TOKEN counts as unset); a supplied one is
 * taken as is from 32 to 1024 printable ASCII characters and refused outside them (`invalid_argument`, exit 2,
 * naming the variable, never quoting it); the check accepts exactly `Bearer <token>` (the scheme in any case).
 * test/integration/cli/mcp-http-bearer.test.ts drives the server and the binary with it.
 */
import assert from 'node:assert/strict';
import { bearerCheck, mcpHttpBearer } from '../../../src/cli/commands/mcp/mcp-http-bearer.js';
import { CliError } from '../../../src/cli/core/cli-error.js';

describe('xx mcp --http bearer: made, supplied, checked', () => {
  it('generates 32 random bytes (base64url), new each launch, when XX_MCP_HTTP_TOKEN is unset or empty', () => {
    const a = mcpHttpBearer({});
    const b = mcpHttpBearer({ XX_MCP_HTTP_TOKEN: '' });
    for (const made of [a, b]) {
      assert.equal(made.source, 'generated');
      assert.match(made.token, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(Buffer.from(made.token, 'base64url').length, 32);
    }
    assert.notEqual(a.token, b.token);
  });

  it('takes XX_MCP_HTTP_TOKEN from 32 to 1024 printable ASCII characters, and refuses anything else', () => {
    for (const ok of ['x'.repeat(32), '!~'.repeat(512), 'a-b_c.d:e/f+g=h~i!j@k#l$m%n^o&p*q(r)s']) {
      assert.deepEqual(mcpHttpBearer({ XX_MCP_HTTP_TOKEN: ok }), { token: ok, source: 'XX_MCP_HTTP_TOKEN' });
    }
    const refused = [
      'x'.repeat(31),
      'x'.repeat(1025),
      `${'x'.repeat(16)} ${'x'.repeat(16)}`,
      `${'x'.repeat(32)}\t`,
      `${'x'.repeat(32)}\n`,
      ` ${'x'.repeat(32)}`,
      'é'.repeat(32),
      `${'x'.repeat(31)}\u0000`,
    ];
    for (const bad of refused) {
      try {
        mcpHttpBearer({ XX_MCP_HTTP_TOKEN: bad });
        assert.fail(`accepted ${JSON.stringify(bad)}`);
      } catch (err) {
        assert.ok(err instanceof CliError, String(err));
        assert.deepEqual(
          [err.code, err.exitCode, err.details],
          ['invalid_argument', 2, { variable: 'XX_MCP_HTTP_TOKEN' }],
        );
        assert.ok(!err.userMessage.includes(bad), 'the value is not quoted back');
      }
    }
  });

  it('accepts exactly `Bearer <token>`: not a neighbour, a prefix, an extension, another scheme or nothing', () => {
    const token = 'k'.repeat(20) + 'Z'.repeat(23);
    const ok = bearerCheck(token);
    assert.equal(ok(`Bearer ${token}`), true);
    assert.equal(ok(`bearer ${token}`), true);
    assert.equal(ok(`BEARER  ${token} `), true);
    for (const bad of [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      token,
      `Basic ${token}`,
      `Bearer ${token.slice(0, -1)}z`,
      `Bearer ${token.slice(0, -1)}`,
      `Bearer ${token}k`,
      `Bearer ${token} extra`,
      `Bearer ${token},Bearer ${token}`,
    ])
      assert.equal(ok(bad), false, String(bad));
  });
});
