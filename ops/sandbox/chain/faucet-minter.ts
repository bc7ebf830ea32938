/**
 * What the sandbox faucet (./faucet-server.ts) does on the chain: mint test USDC to an address and, when asked,
 * make that address approve Permit2 (anvil impersonating it). Every mint first checks that the RPC is the
 * sandbox anvil chain (./faucet-server.ts says why); mints and approvals run one at a time in one queue.
 *
 * Defends against: minting on a chain other than the sandbox's (503 `faucet_wrong_chain`), an impersonation
 * left on after a failed approval (stopped in `finally`). Does not defend: anyone who reaches the faucet may
 * mint (the faucet's header).
 */
import type { Logger } from 'pino';
import { maxUint256, parseEther, toHex, type Address, type Hex, type PublicClient, type WalletClient } from 'viem';
import { testUsdcAbi } from './deploy-test-usdc.js';
import { PERMIT2 } from './deploy-upto-contracts.js';
import type { createFaucetMetrics } from './sandbox-metrics.js';
import type { createSerialQueue } from './sandbox-http.js';

/** A refusal the faucet answers with its HTTP status and stable code. */
export class FaucetError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface FaucetMinterDeps {
  publicClient: PublicClient;
  wallet: WalletClient;
  usdc: Address;
  chainId: number;
  logger: Logger;
  metrics: ReturnType<typeof createFaucetMetrics>;
  serial: ReturnType<typeof createSerialQueue>;
}

export interface Funded {
  address: Address;
  amount_usd: string;
  amount_raw: string;
  tx_hash: Hex;
  balance_raw: string;
  permit2_approval_tx?: Hex;
}

export class FaucetMinter {
  constructor(private readonly deps: FaucetMinterDeps) {}

  /** Mints `amountRaw` to `address` (and approves Permit2 from it when asked); the balance after. */
  fund(address: Address, amountUsd: string, amountRaw: bigint, approvePermit2: boolean): Promise<Funded> {
    const { serial, wallet, usdc, publicClient } = this.deps;
    return serial(async () => {
      await this.assertSandboxChain();
      const txHash = await this.confirmed(
        wallet.writeContract({
          address: usdc,
          abi: testUsdcAbi,
          functionName: 'mint',
          args: [address, amountRaw],
          account: wallet.account!,
          chain: wallet.chain,
        }),
        'faucet_mint_failed',
        'The mint transaction reverted.',
      );
      const permit2ApprovalTx = approvePermit2 ? await this.approvePermit2Counted(address) : undefined;
      const balance = await publicClient.readContract({
        address: usdc,
        abi: testUsdcAbi,
        functionName: 'balanceOf',
        args: [address],
      });
      return {
        address,
        amount_usd: amountUsd,
        amount_raw: amountRaw.toString(),
        tx_hash: txHash,
        balance_raw: balance.toString(),
        ...(permit2ApprovalTx === undefined ? {} : { permit2_approval_tx: permit2ApprovalTx }),
      };
    });
  }

  /** The RPC must be the sandbox anvil chain (its chain id and client version), else 503. */
  private async assertSandboxChain(): Promise<void> {
    const { publicClient, chainId, logger } = this.deps;
    let version: unknown;
    let actualChainId: number;
    try {
      [version, actualChainId] = await Promise.all([
        publicClient.request({ method: 'web3_clientVersion' }),
        publicClient.getChainId(),
      ]);
    } catch (err) {
      logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'faucet cannot reach the chain');
      throw new FaucetError(503, 'faucet_chain_unavailable', 'The sandbox chain is not reachable.');
    }
    if (actualChainId !== chainId || !String(version).toLowerCase().startsWith('anvil')) {
      logger.error(
        { chain_id: actualChainId, expected_chain_id: chainId, client_version: String(version).slice(0, 80) },
        'faucet refused: RPC is not the sandbox anvil chain',
      );
      throw new FaucetError(
        503,
        'faucet_wrong_chain',
        'The faucet only mints on the local sandbox chain (anvil with the configured chain id).',
      );
    }
  }

  private rpc(method: string, params: unknown[]): Promise<unknown> {
    return this.deps.publicClient.request({ method: method as never, params: params as never });
  }

  /** The hash of the transaction `sent`, once mined; a FaucetError 502 with `code` if it reverted. */
  private async confirmed(sent: Promise<Hex>, code: string, message: string): Promise<Hex> {
    const txHash = await sent;
    const receipt = await this.deps.publicClient.waitForTransactionReceipt({ hash: txHash });
    if (receipt.status !== 'success') throw new FaucetError(502, code, message);
    return txHash;
  }

  /** The Permit2 approval, counted; a failure other than a refusal is logged and answered 502. */
  private async approvePermit2Counted(address: Address): Promise<Hex> {
    const { metrics, logger } = this.deps;
    try {
      const tx = await this.approvePermit2(address);
      metrics.permit2Approvals.inc({ outcome: 'approved' });
      return tx;
    } catch (err) {
      metrics.permit2Approvals.inc({ outcome: 'error' });
      if (err instanceof FaucetError) throw err;
      logger.error(
        { address, err: err instanceof Error ? err.message : String(err) },
        'faucet Permit2 approval failed',
      );
      throw new FaucetError(
        502,
        'faucet_permit2_approval_failed',
        'The test USDC was minted, but the Permit2 approval could not be sent; see the faucet log.',
      );
    }
  }

  /** `owner` approves Permit2 for maxUint256 on the test USDC, sent by anvil on its behalf. Runs inside `serial`. */
  private async approvePermit2(owner: Address): Promise<Hex> {
    const { publicClient, wallet, usdc, logger } = this.deps;
    const balance = await publicClient.getBalance({ address: owner });
    if (balance < parseEther('0.01')) await this.rpc('anvil_setBalance', [owner, toHex(parseEther('1'))]);
    await this.rpc('anvil_impersonateAccount', [owner]);
    try {
      return await this.confirmed(
        wallet.writeContract({
          account: owner,
          chain: wallet.chain,
          address: usdc,
          abi: testUsdcAbi,
          functionName: 'approve',
          args: [PERMIT2, maxUint256],
        }),
        'faucet_permit2_approval_failed',
        'The Permit2 approval transaction reverted.',
      );
    } finally {
      await this.rpc('anvil_stopImpersonatingAccount', [owner]).catch((err: unknown) => {
        logger.warn(
          { address: owner, err: err instanceof Error ? err.message : String(err) },
          'faucet could not stop impersonating',
        );
      });
    }
  }
}
