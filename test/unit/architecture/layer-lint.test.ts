/**
 * The layer rules of eslint.config.js do their job: probe files placed (virtually: nothing is written to disk)
 * in each floor import something that floor must not reach, and ESLint must report every one of them, as an
 * import, a type-only import, a re-export or a dynamic import; imports each floor is allowed must pass clean.
 * A rule that silently stopped matching (a moved folder, a resolver that no longer resolves `.js` to `.ts`)
 * fails here rather than letting a layer break unnoticed. The probes import real files of the tree.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';

const ROOT = path.resolve(import.meta.dirname, '../../..');

interface Probe {
  /** Where the probe file pretends to live, relative to the repository root. */
  at: string;
  code: string;
}

/** A probe at `at` importing the repository file `target` (relative to the root) with a relative specifier. */
function importing(at: string, target: string, form: 'import' | 'type' | 'export' | 'dynamic' = 'import'): Probe {
  let spec = path.relative(path.dirname(path.join(ROOT, at)), path.join(ROOT, target)).replace(/\.ts$/, '.js');
  if (!spec.startsWith('.')) spec = `./${spec}`;
  const code = {
    import: `import * as m from '${spec}';\nexport const probe = m;\n`,
    type: `import type * as m from '${spec}';\nexport type Probe = typeof m;\n`,
    export: `export * from '${spec}';\n`,
    dynamic: `export const probe = () => import('${spec}');\n`,
  }[form];
  return { at, code };
}

/** Every import that breaks a floor: [probe location, imported file]. */
const BREAKING: Array<[string, string]> = [
  ['base/probe.ts', 'signer/protocol/signer-client.ts'],
  ['base/probe.ts', 'policy/money.ts'],
  ['base/probe.ts', 'src/shared/error-codes.ts'],
  ['base/probe.ts', 'src/api/app.ts'],
  ['base/probe.ts', 'test/support/api-harness.ts'],
  ['policy/probe.ts', 'signer/protocol/signer-client.ts'],
  ['policy/probe.ts', 'src/shared/error-codes.ts'],
  ['policy/probe.ts', 'src/api/app.ts'],
  ['policy/probe.ts', 'ops/softhsm/init-token.ts'],
  ['policy/probe.ts', 'test/support/api-harness.ts'],
  ['policy/probe.ts', 'bench/pay-bench.ts'],
  // The signer door: src/ reaches signer/protocol/signer-client.ts and signer-protocol.ts, nothing else of signer/.
  ['src/api/probe.ts', 'signer/backends/key-backend.ts'],
  ['src/api/services/probe.ts', 'signer/config/signer-config.ts'],
  ['src/api/probe.ts', 'signer/protocol/frame-codec.ts'],
  ['src/api/pay/probe.ts', 'signer/main.ts'],
  ['src/shared/probe.ts', 'signer/protocol/signer-protocol.ts'],
  ['signer/probe.ts', 'src/api/app.ts'],
  ['signer/protocol/probe.ts', 'src/shared/error-codes.ts'],
  ['signer/probe.ts', 'ops/softhsm/init-token.ts'],
  ['signer/probe.ts', 'test/support/signer-harness.ts'],
  ['signer/probe.ts', 'bench/pay-bench.ts'],
  ['src/shared/probe.ts', 'src/api/errors/app-error.ts'],
  ['src/shared/probe.ts', 'src/cli/program.ts'],
  ['src/shared/probe.ts', 'src/sdk/index.ts'],
  ['src/shared/probe.ts', 'src/x402/wire-schemas.ts'],
  ['src/shared/probe.ts', 'src/x402/koa/index.ts'],
  ['src/x402/probe.ts', 'src/x402/koa/index.ts'],
  ['src/x402/probe.ts', 'src/api/http/schemas/common-schemas.ts'],
  ['src/x402/probe.ts', 'src/sdk/index.ts'],
  ['src/x402/probe.ts', 'src/cli/program.ts'],
  ['src/x402/probe.ts', 'signer/protocol/signer-client.ts'],
  ['src/x402/koa/probe.ts', 'src/api/http/schemas/common-schemas.ts'],
  ['src/x402/koa/probe.ts', 'src/api/errors/app-error.ts'],
  ['src/x402/koa/probe.ts', 'src/api/chain/balance-reader.ts'],
  ['src/x402/koa/probe.ts', 'src/cli/program.ts'],
  ['src/x402/koa/probe.ts', 'src/sdk/index.ts'],
  ['src/x402/koa/probe.ts', 'signer/protocol/signer-client.ts'],
  ['src/sdk/probe.ts', 'src/api/db/knex-client.ts'],
  ['src/sdk/probe.ts', 'src/api/config/app-config.ts'],
  ['src/sdk/probe.ts', 'src/cli/program.ts'],
  ['src/sdk/probe.ts', 'src/x402/koa/index.ts'],
  ['src/sdk/probe.ts', 'ops/softhsm/init-token.ts'],
  ['src/api/probe.ts', 'src/cli/program.ts'],
  ['src/api/services/probe.ts', 'src/sdk/index.ts'],
  ['src/api/http/probe.ts', 'src/x402/koa/index.ts'],
  ['src/api/probe.ts', 'test/support/api-harness.ts'],
  ['src/api/probe.ts', 'bench/pay-bench.ts'],
  ['src/cli/probe.ts', 'src/api/app.ts'],
  ['src/cli/commands/probe.ts', 'src/api/config/app-config.ts'],
  ['src/cli/probe.ts', 'test/support/sign-in.ts'],
  ['src/gate/probe.ts', 'src/api/app.ts'],
  ['src/gate/probe.ts', 'src/api/sellers/seller-views.ts'],
  ['src/gate/probe.ts', 'src/x402/koa/index.ts'],
  ['src/gate/probe.ts', 'src/cli/program.ts'],
  ['src/gate/probe.ts', 'src/sdk/index.ts'],
  ['src/gate/probe.ts', 'ops/softhsm/init-token.ts'],
  ['src/gate/probe.ts', 'test/support/api-harness.ts'],
  ['src/api/probe.ts', 'src/gate/gate-app.ts'],
  ['src/cli/probe.ts', 'src/gate/gate-app.ts'],
  ['src/shared/probe.ts', 'src/gate/gate-app.ts'],
  ['src/x402/probe.ts', 'src/gate/gate-app.ts'],
  ['src/x402/seller/probe.ts', 'src/x402/koa/index.ts'],
  ['src/api/db/probe.ts', 'src/api/wallets/wallet-service.ts'],
  ['src/api/signing/probe.ts', 'src/api/wallets/wallet-service.ts'],
  ['src/api/http/middleware/probe.ts', 'src/api/wallets/wallet-bearer.ts'],
  ['src/api/http/openapi/probe.ts', 'src/api/wallets/wallet-catalog.ts'],
  ['src/api/auth/probe.ts', 'src/api/pay/pay-service.ts'],
  ['src/api/http/routes/probe.ts', 'src/api/pay/pay-schemas.ts'],
  ['src/api/wallets/probe.ts', 'src/api/pay/pay-service.ts'],
  ['src/api/platform/probe.ts', 'src/api/identity/identity-service.ts'],
  ['src/api/platform/probe.ts', 'src/api/pay/pay-service.ts'],
  ['src/api/platform/probe.ts', 'src/api/wallets/wallet-service.ts'],
  ['src/api/platform/store/probe.ts', 'src/api/sellers/seller-routes.ts'],
  ['src/api/identity/probe.ts', 'src/api/wallets/wallet-service.ts'],
  ['src/api/identity/store/probe.ts', 'src/api/pay/pay-service.ts'],
  ['src/api/db/probe.ts', 'src/api/platform/pat-service.ts'],
  ['src/api/auth/probe.ts', 'src/api/identity/identity-service.ts'],
  ['src/api/http/middleware/probe.ts', 'src/api/platform/platform-principal.ts'],
  ['src/api/services/probe.ts', 'src/api/sellers/seller-service.ts'],
  ['src/api/pay/probe.ts', 'src/api/sellers/payouts/seller-payouts.ts'],
  ['src/api/http/routes/probe.ts', 'src/api/sellers/seller-routes.ts'],
  ['src/api/http/openapi/probe.ts', 'src/api/sellers/seller-schemas.ts'],
  ['src/api/db/probe.ts', 'src/api/sellers/store/pg-seller-stores.ts'],
  ['src/api/sellers/store/probe.ts', 'src/api/sellers/gate/gate-service.ts'],
  ['src/api/sellers/store/probe.ts', 'src/api/sellers/ledger/seller-ledger-service.ts'],
];

/** Imports each floor may make: none of these may be reported. */
const ALLOWED: Array<[string, string]> = [
  ['policy/probe.ts', 'policy/money.ts'],
  ['policy/probe.ts', 'base/base-error.ts'],
  ['src/api/services/probe.ts', 'signer/protocol/signer-protocol.ts'],
  ['signer/probe.ts', 'base/base-error.ts'],
  ['signer/probe.ts', 'policy/evaluate-policy.ts'],
  ['src/api/probe.ts', 'base/closeables.ts'],
  ['src/sdk/probe.ts', 'base/base-error.ts'],
  ['src/x402/koa/probe.ts', 'base/base-error.ts'],
  ['signer/probe.ts', 'signer/protocol/signer-protocol.ts'],
  ['src/shared/probe.ts', 'policy/money.ts'],
  ['src/x402/probe.ts', 'src/shared/error-codes.ts'],
  ['src/x402/probe.ts', 'src/x402/wire-schemas.ts'],
  ['src/x402/koa/probe.ts', 'src/x402/wire-schemas.ts'],
  ['src/x402/koa/probe.ts', 'src/shared/chain-registry.ts'],
  ['src/x402/koa/probe.ts', 'policy/money.ts'],
  ['src/sdk/probe.ts', 'src/x402/header-codec.ts'],
  ['src/sdk/probe.ts', 'src/shared/error-codes.ts'],
  ['src/api/probe.ts', 'signer/protocol/signer-client.ts'],
  ['src/api/probe.ts', 'src/x402/wire-schemas.ts'],
  ['src/api/probe.ts', 'src/shared/redact-url.ts'],
  ['src/cli/probe.ts', 'src/sdk/index.ts'],
  ['ops/probe.ts', 'src/api/app.ts'],
  ['test/probe.ts', 'src/api/app.ts'],
  ['bench/probe.ts', 'test/support/api-harness.ts'],
  ['src/gate/probe.ts', 'src/x402/seller/paid-request.ts'],
  ['src/api/probe.ts', 'src/api/sellers/seller-routes.ts'],
  ['src/api/api-catalog.ts', 'src/api/sellers/seller-catalog.ts'],
  ['src/api/sellers/probe.ts', 'src/api/platform/pat-service.ts'],
  ['src/api/sellers/probe.ts', 'src/api/pay/pay-service.ts'],
  ['src/api/sellers/store/probe.ts', 'src/api/sellers/seller-views.ts'],
  ['src/api/sellers/store/probe.ts', 'src/api/db/keyset-cursor.ts'],
  ['src/gate/probe.ts', 'src/x402/bounded-fetch.ts'],
  ['src/gate/probe.ts', 'src/shared/api-responses/gate-responses.ts'],
  ['src/gate/probe.ts', 'base/closeables.ts'],
  ['src/x402/koa/probe.ts', 'src/x402/seller/paid-request.ts'],
  ['bench/probe.ts', 'src/gate/gate-app.ts'],
  ['src/api/pay/probe.ts', 'src/api/wallets/wallet-bearer.ts'],
  ['src/api/pay/probe.ts', 'src/api/http/validate.ts'],
  ['src/api/wallets/probe.ts', 'src/api/http/validate.ts'],
  ['src/api/wallets/probe.ts', 'src/api/signing/signer-gateway.ts'],
  ['src/api/probe.ts', 'src/api/api-catalog.ts'],
  ['src/api/identity/probe.ts', 'src/api/platform/agent-service.ts'],
  ['src/api/platform/probe.ts', 'src/api/db/store-unit.ts'],
  ['src/api/services/probe.ts', 'src/api/platform/account-service.ts'],
  ['src/api/pay/probe.ts', 'src/api/platform/pat-service.ts'],
];

describe('layer lint (eslint.config.js)', function () {
  this.timeout(120_000);
  let eslint: ESLint;
  const lint = async (probe: Probe) => {
    const [result] = await eslint.lintText(probe.code, { filePath: path.join(ROOT, probe.at) });
    assert.ok(result, `no lint result for ${probe.at}`);
    return result.messages;
  };
  const describeProbe = (p: Probe) => `${p.at}:\n${p.code}`;

  before(() => {
    eslint = new ESLint({ cwd: ROOT });
    for (const [, target] of [...BREAKING, ...ALLOWED])
      assert.ok(
        fs.existsSync(path.join(ROOT, target)),
        `probe target ${target} exists (update the probes when a file moves)`,
      );
  });

  it('reports every import that breaks a floor, in each import form', async () => {
    const missed: string[] = [];
    for (const [at, target] of BREAKING) {
      for (const form of ['import', 'type', 'export', 'dynamic'] as const) {
        const probe = importing(at, target, form);
        const messages = await lint(probe);
        assert.ok(!messages.some((m) => m.fatal), `${describeProbe(probe)}\nparse error: ${JSON.stringify(messages)}`);
        if (!messages.some((m) => m.ruleId === 'import-x/no-restricted-paths'))
          missed.push(`${form}: ${at} → ${target}`);
      }
    }
    assert.deepEqual(missed, []);
  });

  it('passes the imports each floor is allowed', async () => {
    const reported: string[] = [];
    for (const [at, target] of ALLOWED) {
      const probe = importing(at, target);
      const messages = await lint(probe);
      if (messages.length > 0)
        reported.push(`${at} → ${target}: ${messages.map((m) => `${m.ruleId}: ${m.message}`).join('; ')}`);
    }
    assert.deepEqual(reported, []);
  });

  it('reports an import it cannot resolve (a path the layer rules could not check)', async () => {
    const messages = await lint({
      at: 'src/sdk/probe.ts',
      code: "import { x } from '../api/no-such-file.js';\nexport const probe = x;\n",
    });
    assert.ok(
      messages.some((m) => m.ruleId === 'import-x/no-unresolved'),
      JSON.stringify(messages),
    );
  });

  it('reports a RegExp built from a non-literal, and passes literal ones', async () => {
    const dynamic = [
      'export const f = (p: string) => new RegExp(p);',
      "export const f = (p: string) => RegExp('^' + p + '$');",
      'export const f = (n: number) => new RegExp(`^[0-9]{${n}}$`);',
      "export const f = (flags: string) => new RegExp('^a$', flags);",
    ];
    for (const code of dynamic) {
      const messages = await lint({ at: 'src/api/probe.ts', code });
      assert.ok(
        messages.some((m) => m.ruleId === 'no-restricted-syntax'),
        `${code}\n${JSON.stringify(messages)}`,
      );
    }
    const constant = [
      "export const r = new RegExp('^[a-z]+$', 'i');",
      'export const r = RegExp(`^a$`);',
      'export const r = /^a$/;',
    ];
    for (const code of constant) assert.deepEqual(await lint({ at: 'signer/probe.ts', code }), [], code);
  });
});
