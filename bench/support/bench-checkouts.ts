/**
 * The checkouts a comparing bench runs side by side, as one environment variable names them:
 * `label=path[=KEY:VALUE;KEY:VALUE]`, comma-separated. The optional third part is extra environment for that
 * checkout's signer processes, so that one checkout can be compared with itself under other settings
 * (`s4=.,s2=.=TREASURY_PKCS11_SESSIONS:2;UV_THREADPOOL_SIZE:2`), except the key `NODE`, the Node binary that
 * checkout's services run on (`n20=.,n24=.=NODE:/opt/node-24/bin/node`; default the bench's own). Paths resolve
 * against the current directory.
 *
 * Defends: nothing beyond a malformed entry refused with the variable's name (a bench is run by hand).
 */
import path from 'node:path';

export interface BenchCheckout {
  label: string;
  /** Absolute path of the checkout. */
  root: string;
  /** Extra environment for this checkout's signer processes. */
  signerEnv: Record<string, string>;
  /** The Node binary its services run on (absent: the bench's own). */
  node?: string;
}

export function parseBenchCheckouts(spec: string, variable: string): BenchCheckout[] {
  return spec
    .split(',')
    .filter(Boolean)
    .map((entry) => {
      const [label, dir, settings, ...rest] = entry.split('=');
      if (!label || !dir || rest.length > 0) {
        throw new Error(`${variable}: expected label=path or label=path=KEY:VALUE;…, got ${entry}`);
      }
      const { NODE: node, ...signerEnv } = Object.fromEntries(
        (settings ?? '')
          .split(';')
          .filter((s) => s.includes(':'))
          .map((s) => [s.slice(0, s.indexOf(':')), s.slice(s.indexOf(':') + 1)]),
      );
      return { label, root: path.resolve(dir), signerEnv, ...(node ? { node: path.resolve(node) } : {}) };
    });
}
