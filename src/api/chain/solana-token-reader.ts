/**
 * Reads on a Solana RPC (TREASURY_SOLANA_RPC_URL) for the wallet wing: the USDC held by a wallet, that is the
 * amount of its associated token account ATA(wallet, mint) under the mint's token program (SPL Token or
 * Token-2022, read once per mint from the mint account's owner), 0 while that account does not exist. The
 * account's address is derived once per wallet (./kept-token-accounts.ts), not at every read.
 *
 * Defends: a slow or dead RPC holding a request (every call is bounded by the RPC timeout); a token account
 * that is not the wallet's USDC account (its mint and owner fields must name them); a failure leaking the
 * endpoint (it travels as ./rpc-failure.ts keeps it, through the balance reader).
 * Does not defend: a lying RPC (the figure is whatever the endpoint answers), nor what ./balance-reader.ts
 * does with a failure (the stale fallback).
 */
import {
  createSolanaRpc,
  getAddressDecoder,
  getBase64Encoder,
  type Address,
  type Rpc,
  type SolanaRpcApi,
} from '@solana/kit';
import { TOKEN_PROGRAMS } from '../../x402/seller/svm-payment.js';
import { keptTokenAccount } from './kept-token-accounts.js';

/** An SPL token account: mint (32), owner (32), amount (u64 LE) first; Token-2022 accounts may be longer. */
const TOKEN_ACCOUNT_MIN_BYTES = 165;

export class SolanaTokenReader {
  private readonly rpc: Rpc<SolanaRpcApi>;
  private readonly tokenPrograms = new Map<string, Address>();

  constructor(
    rpcUrl: string,
    private readonly timeoutMs: number,
  ) {
    this.rpc = createSolanaRpc(rpcUrl);
  }

  /** The raw amount of ATA(owner, mint); 0 when that account does not exist. */
  async tokenBalance(owner: string, mint: string): Promise<bigint> {
    const program = await this.tokenProgram(mint as Address);
    const ata = await keptTokenAccount(owner, mint, program);
    const info = await this.rpc
      .getAccountInfo(ata, { encoding: 'base64', commitment: 'confirmed' })
      .send({ abortSignal: AbortSignal.timeout(this.timeoutMs) });
    if (!info.value) return 0n;
    const data = new Uint8Array(getBase64Encoder().encode(info.value.data[0]));
    const decoder = getAddressDecoder();
    if (
      info.value.owner !== program ||
      data.length < TOKEN_ACCOUNT_MIN_BYTES ||
      decoder.decode(data.subarray(0, 32)) !== mint ||
      decoder.decode(data.subarray(32, 64)) !== owner
    ) {
      throw new Error('the associated token account is not the wallet’s account of this mint');
    }
    return new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(64, true);
  }

  /** The program that owns the mint (SPL Token or Token-2022), read once per mint. */
  private async tokenProgram(mint: Address): Promise<Address> {
    const known = this.tokenPrograms.get(mint);
    if (known) return known;
    const info = await this.rpc
      .getAccountInfo(mint, { encoding: 'base64', commitment: 'confirmed' })
      .send({ abortSignal: AbortSignal.timeout(this.timeoutMs) });
    if (!info.value || !TOKEN_PROGRAMS.includes(info.value.owner)) throw new Error('the mint is not a token mint');
    this.tokenPrograms.set(mint, info.value.owner);
    return info.value.owner;
  }
}
