/**
 * The sandbox's EIP-3009 test USDC on a real anvil (chain id 84532, code placed at the Base Sepolia USDC
 * address): its EIP-712 domain equals viem's, viem-signed authorizations move exactly their value (both
 * signature forms), and it refuses what USDC refuses: high-S twins, v ∈ {0, 1}, reused or cancelled
 * nonces, expired or not-yet-valid windows, receive by a non-payee, mint by a non-minter. Also the
 * compile cache: a second lookup reuses the artifact, and compile errors list solc's messages.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  createWalletClient,
  hashDomain,
  http,
  parseSignature,
  serializeSignature,
  toFunctionSignature,
  type AbiFunction,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { compileTestUsdc, compileTestUsdcSource } from '../../../ops/sandbox/chain/compile-test-usdc.js';
import { BASE_SEPOLIA_USDC, localChain, testUsdcAbi } from '../../../ops/sandbox/chain/deploy-test-usdc.js';
import {
  anvilDevAccount,
  EIP712_DOMAIN_FIELDS,
  fundFromFaucet,
  onlyCacheFile,
  readTokenBalance,
  useTestChain,
} from '../../support/chain-harness.js';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../../../signer/eip3009/hash-transfer-authorization.js';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

const RECEIVE_TYPES = {
  ReceiveWithAuthorization: TRANSFER_WITH_AUTHORIZATION_TYPES.TransferWithAuthorization,
} as const;
const CANCEL_TYPES = {
  CancelAuthorization: [
    { name: 'authorizer', type: 'address' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

describe('TestUsdc (EIP-3009 test token on anvil)', function () {
  this.timeout(60_000);
  const chain = useTestChain();
  const payer = anvilDevAccount(4);
  const payee = anvilDevAccount(5).address;
  const relayer = anvilDevAccount(6);
  const payerAccount = privateKeyToAccount(payer.privateKey);

  const domain = () => ({ name: 'USDC', version: '2', chainId: chain.chainId, verifyingContract: chain.usdc });
  const relayerWallet = () =>
    createWalletClient({
      chain: localChain(chain.chainId, chain.rpcUrl),
      transport: http(chain.rpcUrl, { retryCount: 0 }),
      account: privateKeyToAccount(relayer.privateKey),
    });

  interface Authorization {
    from: Address;
    to: Address;
    value: bigint;
    validAfter: bigint;
    validBefore: bigint;
    nonce: Hex;
  }
  const authorization = (overrides: Partial<Authorization> = {}): Authorization => {
    const now = BigInt(Math.floor(Date.now() / 1000));
    return {
      from: payer.address,
      to: payee,
      value: 1_250_000n,
      validAfter: 0n,
      validBefore: now + 600n,
      nonce: `0x${randomBytes(32).toString('hex')}`,
      ...overrides,
    };
  };
  const signTransfer = (auth: Authorization) =>
    payerAccount.signTypedData({
      domain: domain(),
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      primaryType: 'TransferWithAuthorization',
      message: auth,
    });
  const argsOf = (a: Authorization) => [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce] as const;

  /** Simulates transferWithAuthorization in its bytes-signature form from the relayer. */
  const simulateSignedTransfer = (auth: Authorization, signature: Hex) =>
    chain.publicClient.simulateContract({
      account: relayer.address,
      address: chain.usdc,
      abi: testUsdcAbi,
      functionName: 'transferWithAuthorization',
      args: [...argsOf(auth), signature],
    });

  /** Simulates then sends transferWithAuthorization (v, r, s form) from the relayer; resolves with the receipt status. */
  async function submitVrs(auth: Authorization, v: number, r: Hex, s: Hex): Promise<'success' | 'reverted'> {
    const { request } = await chain.publicClient.simulateContract({
      account: relayer.address,
      address: chain.usdc,
      abi: testUsdcAbi,
      functionName: 'transferWithAuthorization',
      args: [...argsOf(auth), v, r, s],
    });
    const hash = await relayerWallet().writeContract(request);
    return (await chain.publicClient.waitForTransactionReceipt({ hash })).status;
  }

  async function rejects(promise: Promise<unknown>, reason: RegExp): Promise<void> {
    await assert.rejects(promise, (err: Error) => {
      assert.match(err.message, reason);
      return true;
    });
  }

  before(async () => {
    await fundFromFaucet(chain, payer.address, '1000');
  });

  it('sits at the Base Sepolia USDC address with USDC metadata and the anvil #0 minter', async () => {
    assert.equal(chain.chainId, 84532);
    assert.equal(chain.usdc, BASE_SEPOLIA_USDC);
    const read = <F extends 'name' | 'symbol' | 'version' | 'decimals' | 'minter'>(functionName: F) =>
      chain.publicClient.readContract({ address: chain.usdc, abi: testUsdcAbi, functionName });
    assert.equal(await read('name'), 'USDC');
    assert.equal(await read('symbol'), 'USDC');
    assert.equal(await read('version'), '2');
    assert.equal(await read('decimals'), 6);
    assert.equal(await read('minter'), anvilDevAccount(0).address);
  });

  it('DOMAIN_SEPARATOR equals viem hashDomain for {USDC, 2, chainId, verifyingContract} at the placed address', async () => {
    const onChain = await chain.publicClient.readContract({
      address: chain.usdc,
      abi: testUsdcAbi,
      functionName: 'DOMAIN_SEPARATOR',
    });
    const expected = hashDomain({
      domain: { ...domain(), chainId: BigInt(chain.chainId) },
      types: { EIP712Domain: EIP712_DOMAIN_FIELDS },
    });
    assert.equal(onChain, expected);
  });

  it('the typed ABI subset used by TypeScript exists in the compiled ABI', () => {
    const compiled = new Set(
      compileTestUsdc()
        .abi.filter((item): item is AbiFunction => item.type === 'function')
        .map((item) => toFunctionSignature(item)),
    );
    for (const item of testUsdcAbi) {
      if (item.type === 'function')
        assert.ok(compiled.has(toFunctionSignature(item)), `missing in compiled ABI: ${toFunctionSignature(item)}`);
    }
  });

  it('transferWithAuthorization signed with viem signTypedData moves exactly the value and marks the nonce used', async () => {
    const auth = authorization({ value: 1_234_567n });
    const sig = parseSignature(await signTransfer(auth));
    const [payerBefore, payeeBefore] = await Promise.all([
      readTokenBalance(chain, payer.address),
      readTokenBalance(chain, payee),
    ]);
    assert.equal(await submitVrs(auth, Number(sig.v), sig.r, sig.s), 'success');
    assert.equal(await readTokenBalance(chain, payer.address), payerBefore - 1_234_567n);
    assert.equal(await readTokenBalance(chain, payee), payeeBefore + 1_234_567n);
    assert.equal(
      await chain.publicClient.readContract({
        address: chain.usdc,
        abi: testUsdcAbi,
        functionName: 'authorizationState',
        args: [payer.address, auth.nonce],
      }),
      true,
    );
  });

  it('the bytes-signature overload accepts the same 65-byte signature', async () => {
    const auth = authorization({ value: 10_000n });
    const signature = await signTransfer(auth);
    const before = await readTokenBalance(chain, payee);
    const { request } = await simulateSignedTransfer(auth, signature);
    const hash = await relayerWallet().writeContract(request);
    assert.equal((await chain.publicClient.waitForTransactionReceipt({ hash })).status, 'success');
    assert.equal(await readTokenBalance(chain, payee), before + 10_000n);
  });

  it('rejects the high-S twin of a valid signature (both overloads) and moves nothing', async () => {
    const auth = authorization();
    const sig = parseSignature(await signTransfer(auth));
    const highS = `0x${(N - BigInt(sig.s)).toString(16).padStart(64, '0')}` as Hex;
    const flippedV = sig.v === 27n ? 28 : 27;
    const before = await readTokenBalance(chain, payee);
    await rejects(submitVrs(auth, flippedV, sig.r, highS), /invalid signature 's' value/);
    const packed = `${sig.r}${highS.slice(2)}${flippedV.toString(16)}` as Hex;
    await rejects(simulateSignedTransfer(auth, packed), /invalid signature 's' value/);
    assert.equal(await readTokenBalance(chain, payee), before);
    // The original low-S signature still works: nothing was consumed.
    assert.equal(await submitVrs(auth, Number(sig.v), sig.r, sig.s), 'success');
  });

  it('rejects v = 0 / 1 (recovery ids instead of 27 / 28)', async () => {
    const auth = authorization();
    const sig = parseSignature(await signTransfer(auth));
    await rejects(submitVrs(auth, sig.yParity, sig.r, sig.s), /invalid signature 'v' value/);
    const compact = serializeSignature({ r: sig.r, s: sig.s, yParity: sig.yParity });
    // serializeSignature writes 27/28; rewrite the last byte to the raw recovery id.
    const rawV = `${compact.slice(0, -2)}0${sig.yParity}` as Hex;
    await rejects(simulateSignedTransfer(auth, rawV), /invalid signature 'v' value/);
  });

  it('rejects a signature by someone else and a tampered value', async () => {
    const auth = authorization();
    const other = privateKeyToAccount(anvilDevAccount(7).privateKey);
    const foreign = parseSignature(
      await other.signTypedData({
        domain: domain(),
        types: TRANSFER_WITH_AUTHORIZATION_TYPES,
        primaryType: 'TransferWithAuthorization',
        message: auth,
      }),
    );
    await rejects(submitVrs(auth, Number(foreign.v), foreign.r, foreign.s), /FiatTokenV2: invalid signature/);
    const sig = parseSignature(await signTransfer(auth));
    await rejects(
      submitVrs({ ...auth, value: auth.value + 1n }, Number(sig.v), sig.r, sig.s),
      /FiatTokenV2: invalid signature/,
    );
  });

  it('rejects a reused nonce', async () => {
    const auth = authorization({ value: 5_000n });
    const sig = parseSignature(await signTransfer(auth));
    assert.equal(await submitVrs(auth, Number(sig.v), sig.r, sig.s), 'success');
    const before = await readTokenBalance(chain, payee);
    await rejects(submitVrs(auth, Number(sig.v), sig.r, sig.s), /authorization is used or canceled/);
    assert.equal(await readTokenBalance(chain, payee), before);
  });

  it('enforces validAfter < now < validBefore', async () => {
    const now = BigInt(Math.floor(Date.now() / 1000));
    const future = authorization({ validAfter: now + 3600n, validBefore: now + 7200n });
    const fs1 = parseSignature(await signTransfer(future));
    await rejects(submitVrs(future, Number(fs1.v), fs1.r, fs1.s), /authorization is not yet valid/);
    const expired = authorization({ validAfter: 0n, validBefore: now - 10n });
    const es = parseSignature(await signTransfer(expired));
    await rejects(submitVrs(expired, Number(es.v), es.r, es.s), /authorization is expired/);
  });

  it('cancelAuthorization burns the nonce; receiveWithAuthorization only for the payee', async () => {
    const auth = authorization();
    const sig = parseSignature(await signTransfer(auth));
    const cancel = await payerAccount.signTypedData({
      domain: domain(),
      types: CANCEL_TYPES,
      primaryType: 'CancelAuthorization',
      message: { authorizer: payer.address, nonce: auth.nonce },
    });
    const { request } = await chain.publicClient.simulateContract({
      account: relayer.address,
      address: chain.usdc,
      abi: testUsdcAbi,
      functionName: 'cancelAuthorization',
      args: [payer.address, auth.nonce, cancel],
    });
    await chain.publicClient.waitForTransactionReceipt({ hash: await relayerWallet().writeContract(request) });
    await rejects(submitVrs(auth, Number(sig.v), sig.r, sig.s), /authorization is used or canceled/);

    const toRelayer = authorization({ to: relayer.address, value: 7_000n });
    const receiveSig = await payerAccount.signTypedData({
      domain: domain(),
      types: RECEIVE_TYPES,
      primaryType: 'ReceiveWithAuthorization',
      message: toRelayer,
    });
    const receiveArgs = [...argsOf(toRelayer), receiveSig] as const;
    await rejects(
      chain.publicClient.simulateContract({
        account: payee,
        address: chain.usdc,
        abi: testUsdcAbi,
        functionName: 'receiveWithAuthorization',
        args: receiveArgs,
      }),
      /caller must be the payee/,
    );
    const before = await readTokenBalance(chain, relayer.address);
    const sim = await chain.publicClient.simulateContract({
      account: relayer.address,
      address: chain.usdc,
      abi: testUsdcAbi,
      functionName: 'receiveWithAuthorization',
      args: receiveArgs,
    });
    await chain.publicClient.waitForTransactionReceipt({ hash: await relayerWallet().writeContract(sim.request) });
    assert.equal(await readTokenBalance(chain, relayer.address), before + 7_000n);
  });

  it('mint is only for the minter', async () => {
    await rejects(
      chain.publicClient.simulateContract({
        account: relayer.address,
        address: chain.usdc,
        abi: testUsdcAbi,
        functionName: 'mint',
        args: [relayer.address, 1n],
      }),
      /caller is not the minter/,
    );
  });

  it('caches the compiled artifact and lists solc errors on a broken source', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'test-usdc-cache-'));
    try {
      const first = compileTestUsdc({ cacheDir: dir });
      const cached = onlyCacheFile(dir, /^test-usdc-[0-9a-f]{16}\.json$/);
      const mtime = cached.mtimeMs();
      const second = compileTestUsdc({ cacheDir: dir });
      assert.deepEqual(second, first);
      assert.equal(cached.mtimeMs(), mtime);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    assert.throws(
      () =>
        compileTestUsdcSource(
          'pragma solidity ^0.8.20; contract TestUsdc { function f() public { undefinedThing(); } }',
        ),
      (err: Error) =>
        /failed to compile TestUsdc\.sol \(1 error\)/.test(err.message) && /undefinedThing/.test(err.message),
    );
  });
});
