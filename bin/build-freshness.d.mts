// Types of bin/build-freshness.mjs, for the TypeScript launchers that import it (ops/sandbox/start.ts, test/support/).

/** The repository's root. */
export declare const ROOT: string;

/** Every source folder tsconfig.build.json compiles. */
export declare const BUILD_SOURCE_DIRS: readonly string[];

/**
 * True when `compiled` (a path under dist/, relative to the root) exists and is newer than package-lock.json
 * and than every .ts file under `sourceDirs` (relative to the root) but those under `skipDirs`. `root`: the
 * repository's by default.
 */
export declare function buildIsCurrent(
  compiled: string,
  sourceDirs?: readonly string[],
  skipDirs?: readonly string[],
  root?: string,
): boolean;

/**
 * How node runs a TypeScript entry point such as `signer/main.ts`: its compiled file under dist/ (with
 * `--enable-source-maps`) when the build is current, otherwise the source through tsx; `nodeOptions` (a
 * preload) come after tsx, which is then registered in either case, and before the entry point.
 */
export declare function nodeArgsFor(entry: string, nodeOptions?: readonly string[], root?: string): string[];
