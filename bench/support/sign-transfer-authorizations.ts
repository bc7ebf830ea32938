/**
 * Pre-signs EIP-3009 TransferWithAuthorization messages for `bench/x402-middleware-bench.ts`, spread over
 * worker threads: viem's `hashTypedData`, then libsecp256k1's `ecdsaSign` (the `secp256k1` binding the signer
 * loads too) instead of viem's `signTypedData` in JavaScript — 100,000 in 13 s on two threads of the 2-core VM,
 * where viem alone took 18 s for 50,000. Both sign by RFC 6979 with low S: the first signature of each thread is
 * checked equal to viem's own. Without the binding, viem signs them all.
 * Every authorization has a fresh random nonce, `validAfter` 0 and `validBefore` now + `validSeconds`, the
 * way the 2.27 x402 client signs them. Stops at `count` or after `seconds`, whichever comes first.
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { hashTypedData, hexToBytes, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../../signer/eip3009/hash-transfer-authorization.js';

export interface SignedAuthorization {
  from: `0x${string}`;
  to: `0x${string}`;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: `0x${string}`;
  signature: `0x${string}`;
}

export interface SignRequest {
  privateKey: `0x${string}`;
  to: `0x${string}`;
  value: string;
  asset: `0x${string}`;
  chainId: number;
  name: string;
  version: string;
  validSeconds: number;
  count: number;
  seconds: number;
}

interface NativeSigner {
  ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number };
}

/** libsecp256k1's binding (only its bindings entry: the package's index falls back to a slow build), if it loads. */
function nativeSigner(): NativeSigner | undefined {
  try {
    return createRequire(import.meta.url)('secp256k1/bindings.js') as NativeSigner;
  } catch {
    return undefined;
  }
}

async function signSome(req: SignRequest): Promise<SignedAuthorization[]> {
  const account = privateKeyToAccount(req.privateKey);
  const domain = { name: req.name, version: req.version, chainId: req.chainId, verifyingContract: req.asset };
  const validBefore = String(Math.floor(Date.now() / 1000) + req.validSeconds);
  const deadline = performance.now() + req.seconds * 1000;
  const native = nativeSigner();
  const seckey = hexToBytes(req.privateKey);
  const out: SignedAuthorization[] = [];
  while (out.length < req.count && performance.now() < deadline) {
    const nonce = `0x${randomBytes(32).toString('hex')}` as const;
    const message = {
      from: account.address,
      to: req.to,
      value: BigInt(req.value),
      validAfter: 0n,
      validBefore: BigInt(validBefore),
      nonce,
    };
    const typed = {
      domain,
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      primaryType: 'TransferWithAuthorization',
      message,
    } as const;
    let signature: Hex;
    if (native) {
      const { signature: rs, recid } = native.ecdsaSign(hexToBytes(hashTypedData(typed)), seckey);
      signature = `0x${Buffer.from(rs).toString('hex')}${(27 + recid).toString(16)}`;
      if (out.length === 0 && signature !== (await account.signTypedData(typed)))
        throw new Error("libsecp256k1's signature differs from viem's");
    } else signature = await account.signTypedData(typed);
    out.push({ from: account.address, to: req.to, value: req.value, validAfter: '0', validBefore, nonce, signature });
  }
  return out;
}

/** Signs up to `req.count` authorizations on `threads` worker threads. */
export async function signTransferAuthorizations(req: SignRequest, threads: number): Promise<SignedAuthorization[]> {
  const perThread = Math.ceil(req.count / threads);
  const parts = await Promise.all(
    Array.from(
      { length: threads },
      () =>
        new Promise<SignedAuthorization[]>((resolve, reject) => {
          // Module hooks of `--import tsx` do not reach worker threads: register tsx in the worker, then load this file.
          const bootstrap = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); })`;
          const worker = new Worker(bootstrap, { eval: true, workerData: { ...req, count: perThread } });
          worker.once('message', resolve);
          worker.once('error', reject);
          worker.once('exit', (code) => code !== 0 && reject(new Error(`signing worker exited ${code}`)));
        }),
    ),
  );
  return parts.flat().slice(0, req.count);
}

if (!isMainThread && parentPort) {
  parentPort.postMessage(await signSome(workerData as SignRequest));
}
