/**
 * anvil as a child process: it answers on loopback with the requested chain id; off Base Sepolia the
 * token stays at its deployment address and its domain separator follows that address; stop() ends the
 * process (twice is fine); a taken port fails with a clear message; deployment refuses a non-matching
 * chain id; and anvil does not outlive a parent that is SIGKILLed (the watchdog stops it).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { createPublicClient, hashDomain, http } from 'viem';
import { startAnvil, type AnvilHandle } from '../../../ops/sandbox/chain/anvil-process.js';
import { BASE_SEPOLIA_USDC, deployTestUsdc, testUsdcAbi } from '../../../ops/sandbox/chain/deploy-test-usdc.js';
import { EIP712_DOMAIN_FIELDS } from '../../support/chain-harness.js';
import { isProcessAlive as isAlive } from '../../support/process-alive.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

describe('anvil process', function () {
  this.timeout(60_000);
  let anvil: AnvilHandle | undefined;

  afterEach(async () => {
    await anvil?.stop();
    anvil = undefined;
  });

  it('starts on loopback with the chosen chain id; off Base Sepolia the token stays where it was deployed', async () => {
    anvil = await startAnvil({ chainId: 31337 });
    assert.match(anvil.rpcUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    const client = createPublicClient({ transport: http(anvil.rpcUrl) });
    assert.equal(await client.getChainId(), 31337);

    const token = await deployTestUsdc({ rpcUrl: anvil.rpcUrl, chainId: 31337 });
    assert.equal(token.usdc, token.deployedAt);
    assert.notEqual(token.usdc, BASE_SEPOLIA_USDC);
    assert.equal(await client.getCode({ address: BASE_SEPOLIA_USDC }), undefined);
    const domain = { name: 'USDC', version: '2', chainId: 31337, verifyingContract: token.usdc } as const;
    const separator = await client.readContract({
      address: token.usdc,
      abi: testUsdcAbi,
      functionName: 'DOMAIN_SEPARATOR',
    });
    assert.equal(
      separator,
      hashDomain({
        domain: { ...domain, chainId: BigInt(domain.chainId) },
        types: { EIP712Domain: EIP712_DOMAIN_FIELDS },
      }),
    );

    await assert.rejects(deployTestUsdc({ rpcUrl: anvil.rpcUrl, chainId: 84532 }), /chain id 31337, expected 84532/);
  });

  it('stop() ends the process and is idempotent', async () => {
    anvil = await startAnvil();
    const { pid, rpcUrl } = anvil;
    assert.ok(isAlive(pid));
    await anvil.stop();
    await anvil.stop();
    assert.equal(isAlive(pid), false);
    await assert.rejects(fetch(rpcUrl, { method: 'POST', body: '{}' }));
  });

  it('fails clearly when the requested port is taken', async () => {
    const sockets = new Set<net.Socket>();
    const blocker = net.createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      await assert.rejects(startAnvil({ port }), new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use`));
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it('does not outlive a parent process that is SIGKILLed', async () => {
    const script = `import { startAnvil } from ${JSON.stringify(path.join(ROOT, 'ops/sandbox/chain/anvil-process.ts'))};
const a = await startAnvil();
console.log('ANVIL_PID ' + a.pid);
setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const anvilPid = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('child did not report the anvil pid')), 20_000);
      readline.createInterface({ input: parent.stdout! }).on('line', (line) => {
        const match = /^ANVIL_PID (\d+)$/.exec(line);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
      parent.once('exit', (code) => reject(new Error(`child exited early (${code})`)));
    });
    assert.ok(isAlive(anvilPid));
    parent.kill('SIGKILL');
    const gone = await waitUntil(() => !isAlive(anvilPid), 10_000);
    if (!gone) process.kill(anvilPid, 'SIGKILL');
    assert.ok(gone, 'anvil still running 10 s after its parent was SIGKILLed');
  });
});
