/**
 * `npm run lint`: who may import whom, the sizes we promise (files, functions), and a few safety rules. No
 * style rules here (Prettier formats; see .prettierrc.json), and no type-aware rules, so the whole tree lints in
 * seconds; the type-aware ones live in eslint.typed.config.js.
 *
 * The floors, lowest first (docs/architecture.md draws them):
 *   base/          what every process shares (BaseError, ConfigError, ordered shutdown): imports nothing at all
 *   policy/        pure policy rules and money arithmetic: imports base/ only (its error shape), and of the
 *                  packages zod and viem's address checksum and keccak-256 only (POLICY_IMPORTS below)
 *   signer/        the signing process: imports base/ and policy/ (the owner's signed policy is evaluated with
 *                  the same pure rules), nothing from src/, ops/, test/, bench/
 *   src/shared/    what the API, the CLI and the shipped packages share (error codes, chain registry,
 *                  wire schemas): may import policy/ only
 *   src/x402/      the x402 wire codecs (shipped as `./x402`): shared/ and policy/ only
 *   src/x402/koa/  the seller middleware (shipped as `./koa`) and src/sdk/ the buyer SDK (`./sdk`): the
 *                  codecs, shared/ and policy/, never the API server, the CLI, the signer or each other
 *   src/api/       the API server: anything below it, and the signer's door (signer/protocol/signer-client.ts
 *                  and signer-protocol.ts: no other file of signer/ is reachable from src/), never the CLI or the
 *                  shipped packages' own folders (the SDK, the Koa middleware). Inside it the wings (pay/,
 *                  sellers/ and identity/ above wallets/ and platform/) stand on the shared floors (http/
 *                  middleware and OpenAPI helpers, signing/ the gateway, db/, auth/, …), which import no wing.
 *   src/cli/       the `xx` CLI: talks to the API over HTTP, so never imports the API server's code
 *   src/gate/      the gate (managed proxy mode, docs/gate.md): its own process, talking to the API over HTTP;
 *                  the x402 codecs and paywall core (src/x402/, not the Koa adapter), shared/, policy/, base/
 *   dashboard/     the web pages: the public HTTP API only; shared response types and policy/ rules at most
 * Nothing in src/, signer/ or policy/ imports test/ or bench/.
 *
 * An import the resolver cannot find is an error too (import-x/no-unresolved): a path the layer rules cannot
 * resolve is one they cannot check. test/unit/architecture/layer-lint.test.ts lints probe imports that break
 * each floor and fails unless every one is reported.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const ROOT = path.dirname(fileURLToPath(import.meta.url));

/** Folders of the repository, relative to its root. */
const TEST_AND_BENCH = ['test', 'bench'];
const OUTSIDE_SRC = ['signer', 'policy', 'ops', 'migrations', 'bin', ...TEST_AND_BENCH];
const SRC_ROLES = ['src/api', 'src/cli', 'src/sdk', 'src/x402', 'src/gate'];

/** The floors of src/api/ below its wings (wallets/, pay/): none of them imports a wing. */
const API_LOWER_FLOORS = [
  'audit',
  'db',
  'chain',
  'auth',
  'config',
  'net',
  'metrics',
  'log',
  'errors',
  'signing',
  'http/middleware',
  'http/openapi',
  'http/docs',
  'http/validate.ts',
  'http/dashboard-static.ts',
].map((d) => `src/api/${d}`);

/** The x402 codecs: every file of src/x402/ except the Koa middleware under src/x402/koa/. */
const X402_CODECS = ['src/x402/*.{ts,js}', 'src/x402/!(koa)/**/*.{ts,js}'];

/**
 * The sellers wing (src/api/sellers/: sellers, endpoints, ledger, payouts, the gate's routes) stands above the
 * API's lower floors and the other wings: nothing below it imports it, and only the composition root
 * (src/api/app.ts) and the OpenAPI catalogue's assembly reach into it. It may import the platform (accounts,
 * PATs), the wallets and the pay wing's service (payouts are paid through it), never the reverse. Inside it,
 * the stores (src/api/sellers/store/) import nothing of the wing but the rows' shapes (seller-views.ts).
 */
const SELLERS = 'src/api/sellers';
const BELOW_SELLERS = [
  ...['audit', 'auth', 'chain', 'config', 'db', 'errors', 'identity', 'log', 'metrics', 'net', 'pay', 'services'],
  ...['platform', 'wallets', 'signing'],
  ...['http/middleware', 'http/routes', 'http/schemas', 'http/docs', 'http/dashboard-static.ts', 'http/validate.ts'],
].map((d) => `src/api/${d}`);
const SELLERS_WING_ZONES = [
  {
    target: [...BELOW_SELLERS, 'src/api/http/openapi'],
    from: SELLERS,
    message:
      'src/api/sellers/ (the sellers wing) is imported only by the composition root (src/api/app.ts) and the route catalogue (src/api/api-catalog.ts): no lower floor and no other wing reaches into it.',
  },
  {
    target: `${SELLERS}/store`,
    from: SELLERS,
    except: ['./store', './seller-views.ts'],
    message:
      "src/api/sellers/store/ (the wing's stores) imports nothing of the wing above it but the rows' shapes (seller-views.ts).",
  },
];

const zones = [
  {
    target: 'base',
    from: ['policy', 'signer', 'src', 'ops', 'migrations', 'bin', ...TEST_AND_BENCH],
    message:
      'base/ is the lowest floor every process stands on (BaseError, ordered shutdown): it imports no other folder of the repository.',
  },
  {
    target: 'policy',
    from: ['signer', 'src', 'ops', 'migrations', 'bin', ...TEST_AND_BENCH],
    message:
      'policy/ is pure rules and money arithmetic: of the repository it imports base/ only (the error shape, canonical JSON), never signer/, src/, ops/, test/ or bench/.',
  },
  {
    // The signer door: the API reaches the signing process through its socket, so src/ imports the protocol's
    // client and message types and nothing else of signer/ (no backend, no key handling, no limits).
    target: 'src',
    from: 'signer',
    except: ['./protocol/signer-client.ts', './protocol/signer-protocol.ts'],
    message:
      'src/ reaches the signer through its door only: signer/protocol/signer-client.ts and signer-protocol.ts (the client and the message types), never the signer internals.',
  },
  {
    target: 'signer',
    from: ['src', 'ops', 'migrations', 'bin', ...TEST_AND_BENCH],
    message:
      'signer/ is its own process and trusts nothing above it: of the repository it imports base/ and the pure policy/ rules only, nothing from src/, ops/, test/ or bench/.',
  },
  {
    target: 'src/shared',
    from: [...SRC_ROLES, ...OUTSIDE_SRC.filter((d) => d !== 'policy')],
    message:
      'src/shared/ sits below the API, the CLI, the SDK and the x402 packages: it imports none of them (only policy/).',
  },
  {
    target: X402_CODECS.map((g) => path.join(ROOT, g)),
    from: [
      'src/api',
      'src/cli',
      'src/sdk',
      'src/x402/koa',
      'src/gate',
      ...OUTSIDE_SRC.filter((d) => d !== 'policy'),
    ].map((d) => path.join(ROOT, d, '**')),
    message:
      'src/x402/ (the wire codecs, shipped as ./x402) imports only src/shared/ and policy/: never the API, the CLI, the SDK or the Koa middleware.',
  },
  {
    target: 'src/x402/koa',
    from: ['src/api', 'src/cli', 'src/sdk', 'src/gate', ...OUTSIDE_SRC.filter((d) => d !== 'policy')],
    message:
      "src/x402/koa/ ships to other people's servers (./koa): it reaches no server internals (src/api/, src/cli/, signer/, ops/) nor the buyer SDK.",
  },
  {
    target: 'src/sdk',
    from: ['src/api', 'src/cli', 'src/x402/koa', 'src/gate', ...OUTSIDE_SRC.filter((d) => d !== 'policy')],
    message:
      "src/sdk/ ships to buyers (./sdk): it reaches no server internals (src/api/, src/cli/, signer/, ops/) nor the seller's Koa middleware.",
  },
  {
    target: 'src/api',
    from: ['src/cli', 'src/sdk', 'src/x402/koa', 'src/gate', 'bin', ...TEST_AND_BENCH],
    message:
      'src/api/ (the API server) imports neither the CLI nor the shipped SDK or Koa middleware, nor test/ or bench/.',
  },
  {
    target: 'dashboard',
    from: ['src/api', 'src/cli', 'src/sdk', 'src/x402', 'signer', 'ops', 'migrations', 'bin', ...TEST_AND_BENCH],
    message:
      'dashboard/ (the web pages) uses the public HTTP API only: it imports the shared response types (src/shared/) and the pure policy rules (policy/), never server, CLI or SDK code.',
  },
  {
    target: 'src/cli',
    from: ['src/api', 'src/x402/koa', 'src/gate', 'signer', 'ops', 'migrations', ...TEST_AND_BENCH],
    message:
      'src/cli/ (the xx CLI) talks to the API over HTTP: it imports no server internals (src/api/, signer/, ops/), nor test/ or bench/.',
  },
  {
    target: 'src/gate',
    from: ['src/api', 'src/cli', 'src/sdk', 'src/x402/koa', 'signer', 'ops', 'migrations', 'bin', ...TEST_AND_BENCH],
    message:
      'src/gate/ (the gate) is its own process and talks to the API over HTTP: it imports the x402 codecs and paywall core, src/shared/, policy/ and base/ only — never the API server, the CLI, the SDK, the Koa adapter, signer/ or ops/.',
  },
  // Inside the API: the wings stand on the lower floors and never the reverse (docs/architecture.md).
  {
    target: API_LOWER_FLOORS,
    from: ['src/api/wallets', 'src/api/pay'],
    message:
      'The floors below the wings (audit/, db/, chain/, auth/, config/, net/, metrics/, log/, errors/, signing/ and http/middleware/, http/openapi/) import no wing: the wings import them.',
  },
  {
    target: 'src/api/http',
    from: 'src/api/pay',
    message:
      'http/ holds the shared middleware, validation and OpenAPI helpers: it imports no part of the pay wing (the pay wing imports http/, never the reverse).',
  },
  {
    target: 'src/api/wallets',
    from: 'src/api/pay',
    message:
      'The wallet wing stands below the pay wing (pay imports wallets: the wallet, its bearer, its recovery data), never the reverse.',
  },
  // Inside the API: the platform wing (accounts, agents, PATs) stands under the wallets, sellers and identity
  // wings, which import it, never the reverse; identity imports the platform and nothing of the wings above.
  // A wing reaches another through that wing's service interface or a port it declares, never its store.
  {
    target: 'src/api/platform',
    from: [
      'src/api/identity',
      'src/api/pay',
      'src/api/wallets',
      'src/api/sellers',
      'src/api/services',
      'src/api/http/routes',
      'src/api/api-catalog.ts',
    ],
    message:
      'src/api/platform/ (accounts, agents, PATs) is imported by the wings above it (identity, wallets, sellers, pay), never the reverse, nor the wallets and sellers services still in src/api/services/: it declares a port they implement (./agent-wallets.ts; docs/architecture.md).',
  },
  {
    target: 'src/api/identity',
    from: [
      'src/api/pay',
      'src/api/wallets',
      'src/api/sellers',
      'src/api/services',
      'src/api/http/routes',
      'src/api/api-catalog.ts',
    ],
    message:
      'src/api/identity/ (sign-in, sessions) imports the platform wing and the floors below, never the wallets, sellers or pay wings.',
  },
  {
    target: [
      'src/api/db',
      'src/api/auth',
      'src/api/audit',
      'src/api/chain',
      'src/api/config',
      'src/api/net',
      'src/api/metrics',
      'src/api/log',
      'src/api/errors',
      'src/api/http/middleware',
    ],
    from: ['src/api/platform', 'src/api/identity'],
    message:
      'The floors under the wings (db, auth, audit, chain, config, net, metrics, log, errors, http middleware) import no wing: src/api/platform/ and src/api/identity/ stand above them.',
  },
  ...SELLERS_WING_ZONES,
];

/**
 * `RegExp(x)` / `new RegExp(x)` whose pattern (or flags) is not a literal: a pattern compiled from input can
 * backtrack for minutes and freeze the event loop (test/unit/architecture/no-dynamic-regexp.test.ts checks the
 * `.match(` family too).
 */
const CONSTANT = (n) =>
  `[arguments.${n}.type='Literal'], [arguments.${n}.type='TemplateLiteral'][arguments.${n}.expressions.length=0]`;
const dynamicRegExp = (kind) => `${kind}[callee.name='RegExp']:not(:matches(${CONSTANT(0)}))`;
const dynamicFlags = (kind) => `${kind}[callee.name='RegExp'][arguments.length>1]:not(:matches(${CONSTANT(1)}))`;
const NO_DYNAMIC_REGEXP = ['NewExpression', 'CallExpression'].flatMap((kind) => [
  {
    selector: dynamicRegExp(kind),
    message:
      'No regular expression built at run time: pass a regex or string literal to RegExp (docs/security-model.md).',
  },
  { selector: dynamicFlags(kind), message: 'RegExp flags must be a literal.' },
]);

/**
 * Koa's parsed query is never read: it assigns keys onto a plain object, so `?__proto__=1` vanishes and
 * `?constructor` reads as a function. Routes read theirs through `queryOf` (src/api/http/request-query.ts).
 */
const NO_KOA_QUERY = [
  "MemberExpression[object.name='ctx'][property.name='query']",
  "MemberExpression[object.property.name='request'][property.name='query']",
].map((selector) => ({
  selector,
  message: "Read a request's query with queryOf (src/api/http/request-query.ts), not Koa's ctx.query.",
}));

/**
 * What base/ and policy/ may import beyond their own files (their floors in `zones` keep the repository's
 * other folders out). base/ imports nothing at all: not a package, not a Node built-in. policy/ is pure: `zod`
 * for its schemas and viem's two address functions (`getAddress`, `isAddress`: checksum arithmetic, no
 * transport), and nothing that reaches the file system, the network, the clock source or a database. Every
 * other specifier, and every dynamic `import()` (loading code at run time is I/O), is reported.
 */
const RELATIVE_ONLY = '^(?!\\.{1,2}/)';
const BASE_IMPORTS = {
  patterns: [
    { regex: RELATIVE_ONLY, message: 'base/ imports nothing: no package, no Node built-in (see eslint.config.js).' },
  ],
};
const POLICY_IMPORTS = {
  paths: [
    {
      name: 'viem',
      allowImportNames: ['getAddress', 'isAddress', 'keccak256', 'stringToBytes'],
      message:
        'policy/ is pure: of viem only getAddress, isAddress and the keccak-256 of a string (no clients, no transports).',
    },
  ],
  patterns: [
    {
      regex: '^(?!\\.{1,2}/|zod$|viem$)',
      message: 'policy/ is pure: it imports zod, viem (addresses, keccak-256) and its own files only.',
    },
  ],
};
const NO_DYNAMIC_IMPORT = {
  selector: 'ImportExpression',
  message: 'No dynamic import() in base/ or policy/: loading code at run time is I/O.',
};

/**
 * Size. A file holds one idea in at most 400 lines; a function does one thing in at most 80 lines of code
 * (blank lines and comments not counted, so that explaining a step never pushes a function over): 80 is what
 * a reader holds on one screen, and the seams of every longer function in the tree (a route table with its
 * handlers inline, a start-up sequence with its clean-up, a request pipeline with its stages) were steps
 * that read better named. Tests and benches are not held to it: a `describe` is a list of cases, not a
 * function to split.
 *
 * Nothing is exempt but the long functions of the landed migrations below, which are never edited: a new
 * long function or file anywhere fails the lint.
 */
const LENGTH_TARGETS = ['{src,signer,policy,base,ops,bin,migrations,dashboard}/**/*.{ts,tsx,mts,cts,js,mjs,cjs}'];
/** Landed migrations are never edited (docs/architecture.md): these stay as they are; new ones are held to it. */
const LANDED_LONG_MIGRATIONS = ['20261125200400_ledger_verification.ts', '20261128120000_merchant_of_record.ts'];

export default tseslint.config(
  { ignores: ['node_modules/**', '.build/**', 'dist/**', '.treasury/**', 'packages/*/dist/**', '**/*.d.ts'] },
  {
    files: ['**/*.{ts,tsx,mts,cts,js,mjs,cjs}'],
    languageOptions: {
      parser: tseslint.parser,
      ecmaVersion: 2024,
      sourceType: 'module',
      parserOptions: { ecmaFeatures: { jsx: true } },
    },
    // Off: a few files carry directives for rules this config does not enable (no-control-regex).
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: path.join(ROOT, 'tsconfig.json') })],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: ROOT, zones }],
      'import-x/no-unresolved': 'error',
    },
  },
  {
    files: ['{src,signer,policy,ops,bin,dashboard}/**/*.{ts,tsx,mts,cts,js,mjs,cjs}'],
    rules: { 'no-restricted-syntax': ['error', ...NO_DYNAMIC_REGEXP, ...NO_KOA_QUERY] },
  },
  {
    files: ['base/**/*.{ts,js}'],
    rules: {
      'no-restricted-imports': ['error', BASE_IMPORTS],
      'no-restricted-syntax': ['error', ...NO_DYNAMIC_REGEXP, NO_DYNAMIC_IMPORT],
    },
  },
  {
    files: ['policy/**/*.{ts,js}'],
    rules: {
      'no-restricted-imports': ['error', POLICY_IMPORTS],
      'no-restricted-syntax': ['error', ...NO_DYNAMIC_REGEXP, NO_DYNAMIC_IMPORT],
    },
  },
  {
    files: LENGTH_TARGETS,
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  { files: LANDED_LONG_MIGRATIONS.map((f) => `migrations/${f}`), rules: { 'max-lines-per-function': 'off' } },
);
