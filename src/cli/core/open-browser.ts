/**
 * Opens an http(s) URL in the user's browser, where one can open: on a terminal (stdout is a TTY), outside CI,
 * with the platform's opener (`xdg-open`, `open` on macOS, `explorer` on Windows) run directly — no shell — with
 * the URL as its one argument. Resolves whether the opener started; the caller prints the URL either way.
 *
 * Defends: a URL that is not http(s) (`file:`, `javascript:`, a string an opener would read as an option) is
 * never handed to the opener; no shell ever parses the URL; nothing is opened in CI, in a pipe or in a script;
 * the CLI's secrets outliving the command in the browser's environment (`/proc/<pid>/environ`): the opener runs
 * with the CLI's environment less every `XX_*` and `TREASURY_*` variable (XX_KEYSTORE_PASSPHRASE, XX_PAT,
 * XX_MNEMONIC, XX_MCP_HTTP_TOKEN, … — names compared upper-cased, as Windows reads them).
 * Does not: check that a browser actually showed the page (the opener starts detached and is not waited for).
 */
import { spawn as nodeSpawn } from 'node:child_process';

export interface OpenBrowserEnv {
  isTTY: boolean;
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  spawn: typeof nodeSpawn;
}

const processEnv = (): OpenBrowserEnv => ({
  isTTY: !!process.stdout.isTTY,
  env: process.env,
  platform: process.platform,
  spawn: nodeSpawn,
});

/** The URL in canonical form when it is an absolute http(s) URL, else undefined. */
export function browsableUrl(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : undefined;
}

/** Prefixes of the variables the opener does not inherit: the CLI's own (secrets among them) and the server's. */
const WITHHELD_PREFIXES = ['XX_', 'TREASURY_'];

/** `env` without the variables the CLI reads its secrets from. */
export function openerEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(env).filter(([name]) => !WITHHELD_PREFIXES.some((p) => name.toUpperCase().startsWith(p))),
  );
}

/** CI sets CI (`true`, `1`, a provider's name); `CI=false` / `CI=0` mean not CI. */
function inCi(env: NodeJS.ProcessEnv): boolean {
  const ci = env.CI?.trim().toLowerCase();
  return ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0';
}

export function openInBrowser(url: string, host: OpenBrowserEnv = processEnv()): Promise<boolean> {
  const href = browsableUrl(url);
  if (!href || !host.isTTY || inCi(host.env)) return Promise.resolve(false);
  const opener = host.platform === 'darwin' ? 'open' : host.platform === 'win32' ? 'explorer' : 'xdg-open';
  return new Promise((resolve) => {
    try {
      const env = openerEnv(host.env);
      const child = host.spawn(opener, [href], { stdio: 'ignore', detached: true, shell: false, env });
      child.once('error', () => resolve(false));
      child.once('spawn', () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}
