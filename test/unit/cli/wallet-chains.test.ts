/**
 * The account commands' chain rules (src/cli/commands/account/wallet-chains.ts): `--chain solana` is devnet in
 * the local sandbox and mainnet elsewhere; a malformed `--chain` is exit 2 before any request; a wallet's family
 * follows its CAIP-2 network; networks are named by the chain registry, unknown ones shown as they are.
 */
import assert from 'node:assert/strict';
import { CliError } from '../../../src/cli/core/cli-error.js';
import {
  chainToSend,
  checkChainArgument,
  fundFamily,
  networkName,
  walletFamily,
} from '../../../src/cli/commands/account/wallet-chains.js';

const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';

describe('account commands: wallet chains', () => {
  it('sends solana as solana-devnet in the sandbox only; other chains as given', () => {
    assert.equal(chainToSend('solana', true), 'solana-devnet');
    assert.equal(chainToSend('solana', false), 'solana');
    assert.equal(chainToSend('solana-devnet', false), 'solana-devnet');
    assert.equal(chainToSend('base', true), 'base');
    assert.equal(chainToSend(DEVNET, true), DEVNET);
  });

  it('accepts chain names and EVM or Solana CAIP-2 ids; anything else is exit 2 naming --chain', () => {
    for (const ok of ['base', 'base-sepolia', 'solana', 'solana-devnet', 'eip155:8453', DEVNET])
      assert.equal(checkChainArgument(ok), ok);
    for (const bad of ['Doge Coin', 'solana:0OIl', 'eip155:0', `solana:${'1'.repeat(33)}`, '']) {
      assert.throws(
        () => checkChainArgument(bad),
        (err) => err instanceof CliError && err.exitCode === 2 && /--chain/.test(err.userMessage),
        bad,
      );
    }
  });

  it('tells the family from the network and names known networks, never rewriting them', () => {
    assert.equal(walletFamily({ network: DEVNET }), 'svm');
    assert.equal(walletFamily({ network: 'eip155:84532' }), 'evm');
    assert.equal(networkName('eip155:84532'), 'base-sepolia');
    assert.equal(networkName(DEVNET), 'solana-devnet');
    assert.equal(networkName('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp'), 'solana');
    assert.equal(networkName('solana:SomeOtherGenesisHashXXXXXXXXXXXX'), 'solana:SomeOtherGenesisHashXXXXXXXXXXXX');
    assert.equal(fundFamily('solana'), 'svm');
    assert.equal(fundFamily('base'), 'evm');
    assert.throws(
      () => fundFamily('dogecoin'),
      (err) => err instanceof CliError && err.exitCode === 2,
    );
  });
});
