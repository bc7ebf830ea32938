/**
 * A whole treasury-api for integration tests: real SoftHSM signer process (with its own policy store, so every
 * payment passes both the API's policy check and the signer's owner-signed one), a fresh migrated PostgreSQL
 * database, and the Koa app listening on a random loopback port.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import pino, { type Logger } from 'pino';
import { createTreasuryApp, type TreasuryApp } from '../../src/api/app.js';
import { loadAppConfig } from '../../src/api/config/app-config.js';
import type { HostResolver } from '../../src/api/net/vetted-fetch.js';
import { useInSuite } from './late-bound.js';
import { startTestSigner } from './signer-harness.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

export interface TestTreasury {
  baseUrl: string;
  adminToken: string;
  app: TreasuryApp;
  db: TestDatabase;
  signer: Awaited<ReturnType<typeof startTestSigner>>;
  request(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  stop(): Promise<void>;
}

/** Limits no suite reaches (the limiter still runs, so every suite goes through it). */
export const GENEROUS_RATE_LIMITS = {
  TREASURY_RATE_LIMIT_NONCE: '1000000',
  TREASURY_RATE_LIMIT_INIT: '1000000',
  TREASURY_RATE_LIMIT_TOKEN: '1000000',
  TREASURY_RATE_LIMIT_ACCOUNT: '1000000',
  TREASURY_RATE_LIMIT_PAY: '1000000',
  TREASURY_RATE_LIMIT_PAY_ACCOUNT: '1000000',
  TREASURY_RATE_LIMIT_POLICY: '1000000',
  TREASURY_RATE_LIMIT_RECEIPT: '1000000',
  TREASURY_RATE_LIMIT_DISCOVERY: '1000000',
  TREASURY_RATE_LIMIT_AUTH_FAILURES: '1000000',
  TREASURY_RATE_LIMIT_AUTH_FAILURES_PER_TOKEN: '1000000',
};

export async function startTestTreasury(
  options: {
    signerEnv?: Record<string, string>;
    extraEnv?: Record<string, string>;
    clock?: () => Date;
    /** A migrated database the caller owns (and drops); by default a fresh one on the shared test server. */
    database?: TestDatabase;
    /** How tenant-supplied host names resolve (origin verification, OpenAPI ingest); the system resolver by default. */
    resolveHost?: HostResolver;
    /** Where the app logs (silent by default); see ./log-capture.ts to search what it wrote. */
    log?: Logger;
    /**
     * Keep the production rate limits (docs/security-model.md, Rate limits). By default the harness raises
     * them out of reach, since every suite signs in and calls from the one loopback address; the rate-limit
     * tests set their own through extraEnv or ask for the defaults here.
     */
    productionRateLimits?: boolean;
    /** Start without TREASURY_ADMIN_TOKEN (no operator routes); `adminToken` is then a token nothing accepts. */
    withoutAdminToken?: boolean;
    /**
     * The signer's own policy store (docs/adr/0012-owner-signed-policies.md): on by default (a database of its
     * own, dropped on stop); `false` starts a signer that keeps none (its ceilings only).
     */
    policyStore?: boolean;
    /** What node runs for the signer instead of signer/main.ts (a bench's profiling flags; ./signer-harness.ts). */
    signerNodeArgs?: string[];
  } = {},
): Promise<TestTreasury> {
  const signer = await startTestSigner({
    ...(options.signerEnv ? { env: options.signerEnv } : {}),
    ...(options.signerNodeArgs ? { nodeArgs: options.signerNodeArgs } : {}),
    policyStore: options.policyStore ?? true,
  });
  const db = options.database ?? (await createTestDatabase());
  const adminToken = `adm_${randomBytes(24).toString('base64url')}`;
  const config = loadAppConfig({
    TREASURY_SIGNER_SOCKET: signer.socketPath,
    ...(options.withoutAdminToken ? {} : { TREASURY_ADMIN_TOKEN: adminToken }),
    DATABASE_URL: db.connectionString,
    TREASURY_LOG_LEVEL: 'silent',
    TREASURY_PUBLIC_URL: 'http://treasury.test',
    TREASURY_VERIFY_ALLOW_PRIVATE: '1',
    ...(options.productionRateLimits ? {} : GENEROUS_RATE_LIMITS),
    ...options.extraEnv,
  });
  const app = createTreasuryApp({
    config,
    knex: db.knex,
    log: options.log ?? pino({ level: 'silent' }),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.resolveHost ? { resolveHost: options.resolveHost } : {}),
  });
  const server: http.Server = await app.listen(0, '127.0.0.1');
  const { port } = server.address() as { port: number };
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    adminToken,
    app,
    db,
    signer,
    async request(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
      let body: string | undefined;
      if (opts.rawBody !== undefined) body = opts.rawBody;
      else if (opts.body !== undefined) body = JSON.stringify(opts.body);
      if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
        headers['content-type'] = 'application/json';
      const res = await fetch(baseUrl + path, { method, headers, ...(body !== undefined ? { body } : {}) });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        /* non-JSON (metrics) */
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async stop() {
      await app.close();
      if (!options.database) await db.drop();
      await signer.stop();
    },
  };
}

/**
 * The test treasury of the enclosing mocha suite: started in a `before` hook and stopped in an `after` hook
 * registered here, so the suite's own `before` hooks (registered after this call) run once it is up. The
 * handle reads through to the started treasury (./late-bound.ts).
 */
export function useTestTreasury(options?: Parameters<typeof startTestTreasury>[0]): TestTreasury {
  return useInSuite('the test treasury', () => startTestTreasury(options));
}

/** Mints a Treasury account for an agent with the operator token; its API key and account id (no check on the answer). */
export async function mintAgent(
  t: Pick<TestTreasury, 'request' | 'adminToken'>,
  ownerId: string,
): Promise<{ apiKey: string; accountId: string }> {
  const minted = await t.request('POST', '/v1/treasury', {
    token: t.adminToken,
    body: { owner_type: 'agent', owner_id: ownerId },
  });
  return { apiKey: minted.body.api_key, accountId: minted.body.id };
}

/** The API key of a new agent's Treasury account (mintAgent). */
export async function mintAgentKey(t: Pick<TestTreasury, 'request' | 'adminToken'>, ownerId: string): Promise<string> {
  return (await mintAgent(t, ownerId)).apiKey;
}
