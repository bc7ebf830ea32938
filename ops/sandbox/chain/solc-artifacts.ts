/**
 * What the sandbox's two solc-js builds (TestUsdc; Permit2 and the upto stand-ins) share: the slice of
 * solc's standard-JSON output they read, one error report listing every solc error, and the artifact cache
 * (read only when the artifact's own check accepts it; written to a temporary file and renamed, so a
 * concurrent reader never sees half a file).
 */
import fs from 'node:fs';
import type { Abi } from 'viem';

export interface SolcContractOutput {
  abi: Abi;
  evm: {
    bytecode: { object: string };
    deployedBytecode: { object: string; immutableReferences?: Record<string, unknown> };
  };
}

export interface SolcOutput {
  errors?: Array<{ severity: 'error' | 'warning' | 'info'; formattedMessage?: string; message: string }>;
  contracts?: Record<string, Record<string, SolcContractOutput>>;
}

/** Throws `<what> (<n> errors):` followed by every solc error, when there is one. */
export function throwOnSolcErrors(output: SolcOutput, what: string): void {
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length === 0) return;
  const list = errors.map((e) => `  - ${(e.formattedMessage ?? e.message).trim()}`).join('\n');
  throw new Error(`${what} (${errors.length} error${errors.length === 1 ? '' : 's'}):\n${list}`);
}

/** The cached artifact in `file`, if it exists, parses and passes `accept`. */
export function readCachedArtifact<T>(file: string, accept: (value: unknown) => value is T): T | undefined {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    return accept(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Writes `artifact` to `file` through a temporary file and a rename. */
export function writeArtifactAtomically(file: string, artifact: unknown): void {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(artifact, null, 2) + '\n');
  fs.renameSync(tmp, file);
}
