/**
 * The dashboard in a real browser: Debian's Chromium (/usr/bin/chromium, or TREASURY_TEST_CHROMIUM) driven by
 * playwright-core, with the test Treasury's public host (http://treasury.test, the origin sign-in messages
 * must name) mapped to its loopback port, so the pages run on the origin the API expects. Also: a fake
 * EIP-1193 wallet backed by a viem local account (the browser asks Node to sign, and each typed-data request is
 * kept for the test to read: `typedDataRequests`), axe-core evaluated in the
 * page (through the debugging protocol, so the page's CSP stays enforced), and screenshots into
 * .build/screenshots/dashboard/ (git-ignored).
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { PrivateKeyAccount } from 'viem/accounts';
import { ensureDashboardBuilt } from '../../ops/dashboard/build-dashboard.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
export const SCREENSHOT_DIR = path.join(ROOT, '.build/screenshots/dashboard');
export const PUBLIC_ORIGIN = 'http://treasury.test';
export const WIDTHS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } } as const;

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-proxy-server',
];

/** Builds the dashboard if missing or stale, then starts Chromium with treasury.test mapped to `baseUrl`'s port. */
export async function launchDashboardBrowser(baseUrl: string): Promise<Browser> {
  await ensureDashboardBuilt();
  const port = new URL(baseUrl).port;
  const executablePath = process.env.TREASURY_TEST_CHROMIUM ?? '/usr/bin/chromium';
  if (!fs.existsSync(executablePath))
    throw new Error(
      `the dashboard tests drive Chromium at ${executablePath}: apt-get install chromium (or set TREASURY_TEST_CHROMIUM)`,
    );
  return chromium.launch({
    executablePath,
    args: [...CHROMIUM_ARGS, `--host-resolver-rules=MAP treasury.test:80 127.0.0.1:${port}`],
  });
}

export async function newDashboardPage(
  browser: Browser,
  width: keyof typeof WIDTHS = 'desktop',
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: WIDTHS[width], baseURL: PUBLIC_ORIGIN });
  const page = await context.newPage();
  return { context, page };
}

/**
 * What `eth_signTypedData_v4` hands a wallet, signed in Node as a wallet would: the JSON parsed, the domain's
 * own type left to viem, and the primary type's integer fields (decimal strings in JSON) as bigints. A request
 * naming another address than the wallet's is refused, as a real wallet refuses it (EIP-1193 4100).
 */
async function signTypedDataV4(account: PrivateKeyAccount, address: string, json: string): Promise<`0x${string}`> {
  if (address.toLowerCase() !== account.address.toLowerCase())
    throw Object.assign(new Error(`not this wallet's account: ${address}`), { code: 4100 });
  const data = JSON.parse(json) as {
    domain: Record<string, unknown>;
    types: Record<string, Array<{ name: string; type: string }>>;
    primaryType: string;
    message: Record<string, unknown>;
  };
  const { EIP712Domain: _domainType, ...types } = data.types;
  const message = { ...data.message };
  for (const field of types[data.primaryType] ?? [])
    if (/^u?int[0-9]*$/.test(field.type)) message[field.name] = BigInt(String(message[field.name]));
  return account.signTypedData({ domain: data.domain, types, primaryType: data.primaryType, message });
}

/** Each page's `eth_signTypedData_v4` requests, as the page sent them (the typed data's JSON parsed). */
const typedDataAsked = new WeakMap<Page, Array<{ address: string; typedData: unknown }>>();

/** The `eth_signTypedData_v4` requests the page made of its fake wallet so far, in order (see `installFakeWallet`). */
export function typedDataRequests(page: Page): ReadonlyArray<{ address: string; typedData: unknown }> {
  return typedDataAsked.get(page) ?? [];
}

/**
 * A browser wallet (window.ethereum) holding `account`: it answers eth_requestAccounts, eth_chainId (Base
 * Sepolia), personal_sign and eth_signTypedData_v4, signing in Node with the viem account (real signatures,
 * which the API and the signer verify). Installed before any page script runs. Each typed-data request is kept
 * (`typedDataRequests`).
 */
export async function installFakeWallet(page: Page, account: PrivateKeyAccount): Promise<void> {
  const asked: Array<{ address: string; typedData: unknown }> = [];
  typedDataAsked.set(page, asked);
  await page.exposeBinding('__treasuryTestSign', (_source, hex: `0x${string}`) =>
    account.signMessage({ message: { raw: hex } }),
  );
  await page.exposeBinding('__treasuryTestSignTypedData', (_source, address: string, json: string) => {
    asked.push({ address, typedData: JSON.parse(json) as unknown });
    return signTypedDataV4(account, address, json);
  });
  // A string, not a function: the test project compiles without the DOM library.
  await page.addInitScript(`(() => {
    const address = ${JSON.stringify(account.address)};
    window.ethereum = {
      async request({ method, params }) {
        if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [address];
        if (method === 'eth_chainId') return '0x14a34';
        if (method === 'personal_sign') return window.__treasuryTestSign(String(params && params[0]));
        if (method === 'eth_signTypedData_v4')
          return window.__treasuryTestSignTypedData(String(params && params[0]), String(params && params[1]));
        throw Object.assign(new Error('unsupported method ' + method), { code: 4200 });
      },
    };
  })();`);
}

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown; failureSummary?: string }>;
}

/** axe-core's serious and critical violations on the page as it stands. */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate<boolean>("'axe' in window"))) await page.evaluate(axeSource);
  const violations = await page.evaluate<AxeViolation[]>(
    "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)",
  );
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ ...v, nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })) }));
}

/** Saves a full-page screenshot as .build/screenshots/dashboard/<name>-<width>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const width = page.viewportSize()?.width ?? 0;
  const file = path.join(SCREENSHOT_DIR, `${name}-${width}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** Moves the single page to `path` without reloading it (the session lives in the page's memory). */
export async function spaGo(page: Page, path: string): Promise<void> {
  await page.evaluate(
    `history.pushState(null, '', ${JSON.stringify(path)}); dispatchEvent(new PopStateEvent('popstate'))`,
  );
  await page.waitForURL(PUBLIC_ORIGIN + path);
}

/** True when the page is wider than its viewport (a layout that scrolls sideways). */
export async function overflowsSideways(page: Page): Promise<boolean> {
  return page.evaluate<boolean>('document.documentElement.scrollWidth > window.innerWidth + 1');
}
