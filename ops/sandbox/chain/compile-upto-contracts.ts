/**
 * Compiles the contracts the x402 `upto` scheme needs on the sandbox chain, in one solc-js standard-JSON
 * run, and caches the artifacts beside the TestUsdc artifact (default `.treasury/cache/`):
 *
 * - `Permit2`: Uniswap's real source (MIT) from the exact-pinned npm package `@uniswap/v4-periphery`
 *   (`lib/permit2/src/Permit2.sol`, solmate under `lib/permit2/lib/solmate/src/`), with Permit2's own
 *   build settings (via-IR, optimizer at 1,000,000 runs, no metadata hash; the legacy pipeline runs out
 *   of stack). One deliberate change: Permit2 pins `pragma solidity 0.8.17;` and the repository has one
 *   compiler, solc-js 0.8.37, so exactly that pragma line is rewritten to `^0.8.17` in memory. The code
 *   is otherwise byte-for-byte the package's, but the bytecode is not the canonical deployment's.
 * - `x402UptoPermit2Proxy` and `SandboxMulticall3`: our own stand-ins (ops/sandbox/chain/contracts/).
 *
 * Source unit names: `permit2/…` → the Permit2 directory of that package, `solmate/…` → its solmate,
 * `sandbox/…` → ops/sandbox/chain/contracts/; relative imports resolve against the importing unit as
 * solc does. The import graph is walked before compiling (a regex over `import … "path"`), so the cache
 * key (sha256 over every source's text, the compiler version and the settings) is known without loading
 * solc; solc is loaded only on a cache miss. A cache file that does not parse or does not match its key
 * is ignored and rewritten (write to a temporary file, then rename). On a miss in the given cache
 * directory the repository's default one (`.treasury/cache/`, filled by the test harness) is consulted
 * before compiling, and a valid file found there is copied over: a sandbox started with a fresh
 * TREASURY_DATA_DIR (the e2e tests) then skips the 5–7 s cold compile of Permit2.
 * Not defended: the Permit2 source is trusted as published on npm (integrity pinned in package-lock).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Abi, Hex } from 'viem';
import { DEFAULT_CACHE_DIR, loadSolc, solcPackageVersion } from './compile-test-usdc.js';
import { readCachedArtifact, throwOnSolcErrors, writeArtifactAtomically, type SolcOutput } from './solc-artifacts.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SANDBOX_CONTRACTS_DIR = path.join(HERE, 'contracts');

/** The contracts compiled here: [source unit, contract name]. */
const TARGETS = {
  permit2: ['permit2/src/Permit2.sol', 'Permit2'],
  uptoProxy: ['sandbox/X402UptoPermit2Proxy.sol', 'x402UptoPermit2Proxy'],
  multicall3: ['sandbox/SandboxMulticall3.sol', 'SandboxMulticall3'],
} as const;

type TargetName = keyof typeof TARGETS;

const OUTPUTS = [
  'abi',
  'evm.bytecode.object',
  'evm.deployedBytecode.object',
  'evm.deployedBytecode.immutableReferences',
];

const SETTINGS = {
  viaIR: true,
  optimizer: { enabled: true, runs: 1_000_000 },
  evmVersion: 'cancun',
  metadata: { bytecodeHash: 'none' },
  outputSelection: Object.fromEntries(Object.values(TARGETS).map(([unit, name]) => [unit, { [name]: OUTPUTS }])),
} as const;

/** Permit2's exact compiler pin, relaxed so the repository's solc-js can compile it (see the header). */
const PERMIT2_PRAGMA = /^pragma solidity 0\.8\.17;$/m;
const RELAXED_PRAGMA = 'pragma solidity ^0.8.17;';

export interface ContractArtifact {
  contractName: string;
  abi: Abi;
  /** Creation code. */
  bytecode: Hex;
  /** Runtime code as compiled (immutables still zero). */
  deployedBytecode: Hex;
  /** True when the runtime code has immutable slots (then deploy it; do not set the compiled code). */
  hasImmutables: boolean;
}

export interface UptoContractsArtifact {
  compilerVersion: string;
  /** sha256 over every source, the compiler version and the settings: the cache key. */
  cacheKey: string;
  contracts: Record<TargetName, ContractArtifact>;
}

export interface CompileUptoContractsOptions {
  /** Where artifacts are cached (default `.treasury/cache/` at the repository root). */
  cacheDir?: string;
  /** Read-only caches consulted on a miss before compiling (default: the repository's `.treasury/cache/`). */
  seedCacheDirs?: string[];
}

/** The Permit2 directory inside the exact-pinned `@uniswap/v4-periphery` package. */
export function permit2PackageDir(): string {
  const require = createRequire(import.meta.url);
  let manifest: string;
  try {
    manifest = require.resolve('@uniswap/v4-periphery/package.json');
  } catch (err) {
    throw new Error(
      `cannot find @uniswap/v4-periphery (Permit2's source); run npm install: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  return path.join(path.dirname(manifest), 'lib', 'permit2');
}

/** Maps a solc source unit name to a file, or undefined for names outside the three roots. */
function fileOf(unit: string, permit2Dir: string): string | undefined {
  const normalized = path.posix.normalize(unit);
  if (normalized !== unit || unit.split('/').includes('..')) return undefined;
  const [root, ...rest] = unit.split('/');
  const relative = rest.join('/');
  if (!relative.endsWith('.sol')) return undefined;
  if (root === 'permit2') return path.join(permit2Dir, relative);
  if (root === 'solmate') return path.join(permit2Dir, 'lib', 'solmate', relative);
  if (root === 'sandbox') return path.join(SANDBOX_CONTRACTS_DIR, relative);
  return undefined;
}

function readUnit(unit: string, permit2Dir: string): string {
  const file = fileOf(unit, permit2Dir);
  if (!file) throw new Error(`Solidity import ${JSON.stringify(unit)} is outside permit2/, solmate/ and sandbox/`);
  const text = fs.readFileSync(file, 'utf8');
  return unit.startsWith('permit2/') ? text.replace(PERMIT2_PRAGMA, RELAXED_PRAGMA) : text;
}

/** solc's resolution of an import path written in `importer`: relative paths against its directory. */
function resolveImport(importer: string, written: string): string {
  if (written.startsWith('./') || written.startsWith('../'))
    return path.posix.normalize(path.posix.join(path.posix.dirname(importer), written));
  return written;
}

const IMPORT_PATTERN = /^\s*import\s+(?:[^'";]*?\s+from\s+)?["']([^"']+)["']/gm;

/** Every source unit reachable from the targets, with its (pragma-adjusted) text. */
export function collectUptoContractSources(permit2Dir = permit2PackageDir()): Record<string, string> {
  const sources: Record<string, string> = {};
  const pending: string[] = Object.values(TARGETS).map(([unit]) => unit);
  while (pending.length > 0) {
    const unit = pending.pop()!;
    if (unit in sources) continue;
    const text = readUnit(unit, permit2Dir);
    sources[unit] = text;
    for (const match of text.matchAll(IMPORT_PATTERN)) pending.push(resolveImport(unit, match[1]!));
  }
  // Sorted, so the cache key does not depend on the walk order.
  return Object.fromEntries(Object.entries(sources).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function cacheKeyFor(sources: Record<string, string>, compilerVersion: string): string {
  return createHash('sha256')
    .update(JSON.stringify({ sources, compilerVersion, settings: SETTINGS, targets: TARGETS }))
    .digest('hex');
}

const HEX = /^0x[0-9a-f]+$/;

function isArtifact(value: unknown, cacheKey: string): value is UptoContractsArtifact {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<UptoContractsArtifact>;
  if (v.cacheKey !== cacheKey || typeof v.contracts !== 'object' || v.contracts === null) return false;
  return (Object.keys(TARGETS) as TargetName[]).every((name) => {
    const c = (v.contracts as Partial<Record<TargetName, Partial<ContractArtifact>>>)[name];
    return (
      !!c &&
      Array.isArray(c.abi) &&
      typeof c.bytecode === 'string' &&
      HEX.test(c.bytecode) &&
      typeof c.deployedBytecode === 'string' &&
      HEX.test(c.deployedBytecode) &&
      typeof c.hasImmutables === 'boolean'
    );
  });
}

/** Compiles the given sources (no cache involved). Throws listing every solc error. */
export function compileUptoContractSources(
  sources: Record<string, string>,
  permit2Dir = permit2PackageDir(),
): UptoContractsArtifact {
  const solc = loadSolc();
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(Object.entries(sources).map(([unit, content]) => [unit, { content }])),
    settings: SETTINGS,
  };
  // Every reachable unit is already in `sources`; the callback serves anything solc asks for beyond them.
  const findImport = (unit: string): { contents: string } | { error: string } => {
    try {
      return { contents: sources[unit] ?? readUnit(unit, permit2Dir) };
    } catch (err) {
      return { error: err instanceof Error ? err.message : String(err) };
    }
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImport })) as SolcOutput;
  throwOnSolcErrors(output, `solc ${solc.version()} failed to compile the upto contracts`);
  const contracts = {} as Record<TargetName, ContractArtifact>;
  for (const [name, [unit, contractName]] of Object.entries(TARGETS) as Array<
    [TargetName, readonly [string, string]]
  >) {
    const c = output.contracts?.[unit]?.[contractName];
    if (!c || !c.evm.bytecode.object || !c.evm.deployedBytecode.object)
      throw new Error(`solc ${solc.version()} produced no bytecode for ${contractName} in ${unit}`);
    contracts[name] = {
      contractName,
      abi: c.abi,
      bytecode: `0x${c.evm.bytecode.object.toLowerCase()}`,
      deployedBytecode: `0x${c.evm.deployedBytecode.object.toLowerCase()}`,
      hasImmutables: Object.keys(c.evm.deployedBytecode.immutableReferences ?? {}).length > 0,
    };
  }
  return { compilerVersion: solc.version(), cacheKey: cacheKeyFor(sources, solcPackageVersion()), contracts };
}

/** Returns the upto contracts' artifacts from the cache, compiling and caching them first when missing or stale. */
export function compileUptoContracts(options: CompileUptoContractsOptions = {}): UptoContractsArtifact {
  const cacheDir = path.resolve(options.cacheDir ?? DEFAULT_CACHE_DIR);
  const permit2Dir = permit2PackageDir();
  const sources = collectUptoContractSources(permit2Dir);
  const cacheKey = cacheKeyFor(sources, solcPackageVersion());
  const file = path.join(cacheDir, `upto-contracts-${cacheKey.slice(0, 16)}.json`);
  const accept = (v: unknown): v is UptoContractsArtifact => isArtifact(v, cacheKey);
  const cached = readCachedArtifact(file, accept);
  if (cached) return cached;

  const seeds = (options.seedCacheDirs ?? [DEFAULT_CACHE_DIR])
    .map((dir) => path.resolve(dir))
    .filter((dir) => dir !== cacheDir);
  const seeded = seeds
    .map((dir) => readCachedArtifact(path.join(dir, path.basename(file)), accept))
    .find((a) => a !== undefined);
  const artifact = seeded ?? compileUptoContractSources(sources, permit2Dir);
  fs.mkdirSync(cacheDir, { recursive: true });
  writeArtifactAtomically(file, artifact);
  return artifact;
}
