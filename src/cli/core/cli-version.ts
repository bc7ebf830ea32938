/**
 * The version of the package the CLI ships in: the nearest package.json above this file, so it is found from
 * the sources (src/cli/core/) and from the bundle (dist/cli/chunks/, where dist/ has no package.json of its
 * own) alike. `xx --version` and the `xx mcp` server's announced version read it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function cliVersion(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: unknown };
      if (typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not here: one folder up
    }
    if (path.dirname(dir) === dir) return '0.0.0';
  }
}
