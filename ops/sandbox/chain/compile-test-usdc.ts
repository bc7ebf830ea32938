/**
 * Compiles ops/sandbox/chain/contracts/TestUsdc.sol with solc-js (standard JSON, optimizer on, fixed EVM
 * version) and caches the artifact (abi, creation and runtime bytecode) as JSON under a cache directory
 * (default `.treasury/cache/`), keyed by the sha256 of the source, the compiler version and the settings,
 * so later sandbox starts and test runs skip the ~seconds-long compile. solc is loaded only on a cache
 * miss. A cache file that does not parse or does not match its key is ignored and rewritten.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Abi, Hex } from 'viem';
import { readCachedArtifact, throwOnSolcErrors, writeArtifactAtomically, type SolcOutput } from './solc-artifacts.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../../..');

export const TEST_USDC_SOURCE_PATH = path.join(HERE, 'contracts', 'TestUsdc.sol');
export const DEFAULT_CACHE_DIR = path.join(ROOT, '.treasury', 'cache');

const SOURCE_NAME = 'TestUsdc.sol';
const CONTRACT_NAME = 'TestUsdc';
const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  // Pinned so the artifact does not change with the compiler's default and runs on anvil's hardfork.
  evmVersion: 'cancun',
  outputSelection: {
    [SOURCE_NAME]: { [CONTRACT_NAME]: ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] },
  },
} as const;

export interface TestUsdcArtifact {
  contractName: string;
  compilerVersion: string;
  /** sha256 over source, compiler version and settings: the cache key. */
  cacheKey: string;
  abi: Abi;
  /** Creation code (constructor(address minter) arguments appended at deploy time). */
  bytecode: Hex;
  /** Runtime code as compiled; the immutable minter slot is still zero here (read the deployed code instead). */
  deployedBytecode: Hex;
}

export interface CompileTestUsdcOptions {
  /** Where artifacts are cached (default `.treasury/cache/` at the repository root). */
  cacheDir?: string;
}

/** The slice of solc-js's API the sandbox uses (standard JSON in and out, optional import callback). */
export interface SolcModule {
  version(): string;
  compile(input: string, callbacks?: { import(path: string): { contents: string } | { error: string } }): string;
}

let solcModule: SolcModule | undefined;

/** Loads solc-js once per process (the compiler is large: load it only on a cache miss). */
export function loadSolc(): SolcModule {
  if (!solcModule) {
    try {
      solcModule = createRequire(import.meta.url)('solc') as SolcModule;
    } catch (err) {
      throw new Error(
        `cannot load the solc package (solc-js); run npm install: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  return solcModule;
}

/** The compiler version the cache key refers to: read from solc's package.json, without loading the compiler. */
export function solcPackageVersion(): string {
  const require = createRequire(import.meta.url);
  const pkg = JSON.parse(fs.readFileSync(require.resolve('solc/package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

function cacheKeyFor(source: string, compilerVersion: string): string {
  return createHash('sha256')
    .update(JSON.stringify({ source, compilerVersion, settings: SETTINGS, contract: CONTRACT_NAME }))
    .digest('hex');
}

function isArtifact(value: unknown, cacheKey: string): value is TestUsdcArtifact {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<TestUsdcArtifact>;
  return (
    v.cacheKey === cacheKey &&
    Array.isArray(v.abi) &&
    typeof v.bytecode === 'string' &&
    /^0x[0-9a-f]+$/.test(v.bytecode) &&
    typeof v.deployedBytecode === 'string' &&
    /^0x[0-9a-f]+$/.test(v.deployedBytecode)
  );
}

/** Compiles the source (no cache involved). Throws listing every solc error. */
export function compileTestUsdcSource(source: string): TestUsdcArtifact {
  const solc = loadSolc();
  const input = { language: 'Solidity', sources: { [SOURCE_NAME]: { content: source } }, settings: SETTINGS };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  throwOnSolcErrors(output, `solc ${solc.version()} failed to compile ${SOURCE_NAME}`);
  const contract = output.contracts?.[SOURCE_NAME]?.[CONTRACT_NAME];
  if (!contract || !contract.evm.bytecode.object || !contract.evm.deployedBytecode.object) {
    throw new Error(`solc ${solc.version()} produced no bytecode for ${CONTRACT_NAME} in ${SOURCE_NAME}`);
  }
  return {
    contractName: CONTRACT_NAME,
    compilerVersion: solc.version(),
    cacheKey: cacheKeyFor(source, solcPackageVersion()),
    abi: contract.abi,
    bytecode: `0x${contract.evm.bytecode.object.toLowerCase()}`,
    deployedBytecode: `0x${contract.evm.deployedBytecode.object.toLowerCase()}`,
  };
}

/** Returns the TestUsdc artifact from the cache, compiling and caching it first when missing or stale. */
export function compileTestUsdc(options: CompileTestUsdcOptions = {}): TestUsdcArtifact {
  const cacheDir = path.resolve(options.cacheDir ?? DEFAULT_CACHE_DIR);
  const source = fs.readFileSync(TEST_USDC_SOURCE_PATH, 'utf8');
  const cacheKey = cacheKeyFor(source, solcPackageVersion());
  const file = path.join(cacheDir, `test-usdc-${cacheKey.slice(0, 16)}.json`);
  const cached = readCachedArtifact(file, (v): v is TestUsdcArtifact => isArtifact(v, cacheKey));
  if (cached) return cached;

  const artifact = compileTestUsdcSource(source);
  fs.mkdirSync(cacheDir, { recursive: true });
  writeArtifactAtomically(file, artifact);
  return artifact;
}
