/**
 * One loopback rule for every sandbox URL (src/shared/loopback-host.ts `isLoopbackHttpUrl`): the CLI's three
 * sandbox checks — the EVM chain's RPC and faucet in sandbox.json (local-chain.ts, `sandbox_chain_not_local`), the
 * Solana RPC (self-custody-solana.ts, `solana_rpc_not_loopback`) and a faucet asked for money (local-sandbox.ts,
 * `faucet_not_loopback`) — and the API's (src/api/net/loopback-url.ts) accept and refuse the same URLs: a faucet URL
 * the API announces is one the CLI calls. Through the real modules and a real sandbox.json (0600) in a temporary
 * TREASURY_DATA_DIR; the faucet's fetch is recorded and answered here, so no request leaves the process. Two more
 * callers hold to the same rule: where `xx mcp --http` may listen without `--allow-remote`
 * (mcp-listen-address.ts, `non_loopback_refused`) and the Solana RPC a sandbox API may read
 * (ops/sandbox/solana/solana-rpc-loopback.ts, `sandbox_solana_rpc_not_loopback`).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assertLoopbackSolanaRpc } from '../../../ops/sandbox/solana/solana-rpc-loopback.js';
import { isLoopbackUrl as apiIsLoopbackUrl } from '../../../src/api/net/loopback-url.js';
import { localChain } from '../../../src/cli/commands/account/local-chain.js';
import { requestSandboxFaucet } from '../../../src/cli/commands/account/local-sandbox.js';
import { localSolanaChain } from '../../../src/cli/commands/account/self-custody-solana.js';
import { parseListenAddress } from '../../../src/cli/commands/mcp/mcp-listen-address.js';
import type { CliContext } from '../../../src/cli/core/cli-context.js';
import { CliError } from '../../../src/cli/core/cli-error.js';
import { isLoopbackHttpUrl } from '../../../src/shared/loopback-host.js';

const API_URL = 'http://127.0.0.1:8402';
const ctx = {
  apiUrl: () => API_URL,
  env: { name: 'dev' },
  spin: <T>(_label: string, run: () => Promise<T>) => run(),
} as unknown as CliContext;

/** http(s) URLs on this machine, in the spellings the WHATWG parser normalises. */
const LOOPBACK = [
  'http://127.0.0.1:9',
  'http://127.1:9',
  'http://127.255.255.254:9',
  'https://localhost:9',
  'http://LOCALHOST:9',
  'http://[::1]:9',
  'http://[0:0:0:0:0:0:0:1]:9',
  // 127.0.0.1 IPv4-mapped: the kernel delivers it to 127.0.0.1 (the API's rule accepted it already).
  'http://[::ffff:127.0.0.1]:9',
];
/** http(s) URLs that are not (or not surely) this machine. */
const ELSEWHERE = [
  'http://0.0.0.0:9',
  'http://[::]:9',
  'http://10.0.0.1:9',
  'http://192.168.1.10:9',
  'http://[2001:db8::1]:9',
  'http://[::ffff:10.0.0.1]:9',
  'http://localhost.example:9',
  'http://localhost.:9',
  'http://app.localhost:9',
  'http://127.0.0.1.nip.io:9',
  'http://127.0.0.1@rpc.example:9',
  'https://rpc.example/?host=127.0.0.1',
];

/** The CliError code `run` throws, or `accepted`. */
async function outcome(run: () => unknown): Promise<string> {
  try {
    await run();
    return 'accepted';
  } catch (err) {
    assert.ok(err instanceof CliError, String(err));
    return err.code;
  }
}

describe('the CLI and the API share one loopback rule for sandbox URLs', () => {
  let dataDir: string;
  const saved = { dataDir: process.env.TREASURY_DATA_DIR, solanaRpc: process.env.XX_SOLANA_RPC_URL };
  const realFetch = globalThis.fetch;
  /** The URLs the faucet check let through to fetch. */
  const fetched: string[] = [];
  before(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'xx-sandbox-loopback-'));
    process.env.TREASURY_DATA_DIR = dataDir;
    delete process.env.XX_SOLANA_RPC_URL;
    globalThis.fetch = (async (input: string | URL | Request) => {
      fetched.push(String(input));
      return new Response(JSON.stringify({ funded: true }), { headers: { 'content-type': 'application/json' } });
    }) as typeof fetch;
  });
  after(() => {
    globalThis.fetch = realFetch;
    for (const [name, value] of [
      ['TREASURY_DATA_DIR', saved.dataDir],
      ['XX_SOLANA_RPC_URL', saved.solanaRpc],
    ] as const)
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const writeSandbox = (url: string) =>
    fs.writeFileSync(
      path.join(dataDir, 'sandbox.json'),
      JSON.stringify({
        api_url: API_URL,
        chain_id: 84532,
        rpc_url: url,
        usdc: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
        faucet_url: url,
        solana_rpc_url: url,
      }),
      { mode: 0o600 },
    );

  it('the shared rule: http(s) only, on localhost or a loopback address; never a throw', () => {
    for (const url of LOOPBACK) assert.equal(isLoopbackHttpUrl(url), true, url);
    for (const url of [...ELSEWHERE, 'ftp://127.0.0.1/', 'ws://127.0.0.1:9', 'file:///etc/hosts', 'not a url', ''])
      assert.equal(isLoopbackHttpUrl(url), false, url);
  });

  it("the API's and the CLI's three checks agree with it on every URL", async () => {
    for (const url of [...LOOPBACK, ...ELSEWHERE]) {
      const loopback = isLoopbackHttpUrl(url);
      assert.equal(apiIsLoopbackUrl(url), loopback, `API: ${url}`);
      writeSandbox(url);
      assert.deepEqual(
        {
          chain: await outcome(() => localChain(ctx)),
          solana: await outcome(() => localSolanaChain(ctx)),
          faucet: await outcome(() => requestSandboxFaucet(ctx, url, { address: '0x0', amount_usd: '1' })),
        },
        loopback
          ? { chain: 'accepted', solana: 'accepted', faucet: 'accepted' }
          : { chain: 'sandbox_chain_not_local', solana: 'solana_rpc_not_loopback', faucet: 'faucet_not_loopback' },
        url,
      );
    }
    assert.deepEqual(fetched, LOOPBACK, 'the faucet was asked on loopback URLs only');
  });

  it("the sandbox's Solana RPC check agrees with it on every URL", () => {
    for (const url of [...LOOPBACK, ...ELSEWHERE]) {
      let code = 'accepted';
      try {
        assertLoopbackSolanaRpc(url, 'TREASURY_SOLANA_RPC_URL');
      } catch (err) {
        code = (err as { code?: string }).code ?? String(err);
      }
      assert.equal(code, isLoopbackHttpUrl(url) ? 'accepted' : 'sandbox_solana_rpc_not_loopback', url);
    }
  });

  it('`xx mcp --http` listens without --allow-remote exactly where the rule says loopback', async () => {
    // host:port as `--http` takes them: the URLs' hosts whose spelling its parser reads (an IPv6 address in
    // brackets, hex groups only; a name of letters, digits, dots and dashes).
    const hosts = ['127.0.0.1', '127.9.9.9', 'localhost', '[::1]', '[::ffff:7f00:1]', '0.0.0.0', '[::]', '10.0.0.1'];
    hosts.push('192.168.1.10', '[2001:db8::1]', '[::ffff:a00:1]', 'localhost.example', 'app.localhost');
    for (const host of hosts) {
      const loopback = isLoopbackHttpUrl(`http://${host}:9`);
      assert.equal(
        await outcome(() => parseListenAddress(`${host}:8765`, false)),
        loopback ? 'accepted' : 'non_loopback_refused',
        host,
      );
      assert.equal(parseListenAddress(`${host}:8765`, true).loopback, loopback, `--allow-remote: ${host}`);
    }
  });
});
