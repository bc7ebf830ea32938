/**
 * Which accepts entry the buyer pays: the first one it can satisfy, in the seller's order — scheme `exact`
 * (with the token's EIP-712 name and version) or `upto` (with the facilitator's address, Permit2 only),
 * network matching the buyer's patterns (default `eip155:*`) and the wallet's own network, a positive price.
 */
import assert from 'node:assert/strict';
import { networkMatches, selectAccept, selectAccepts } from '../../../src/sdk/index.js';
import { requirements } from '../x402/x402-fixtures.js';

describe('buyer SDK: selectAccept', () => {
  const mainnet = requirements({ network: 'eip155:8453', amount: '1' });
  const upto = requirements({ scheme: 'upto' });
  const facilitatorAddress = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
  const uptoOk = requirements({
    scheme: 'upto',
    extra: { name: 'USDC', version: '2', facilitatorAddress, assetTransferMethod: 'permit2' },
  });
  const uptoNoMethod = requirements({ scheme: 'upto', extra: { facilitatorAddress } });
  const uptoEip3009 = requirements({ scheme: 'upto', extra: { facilitatorAddress, assetTransferMethod: 'eip3009' } });
  const exactPermit2 = requirements({ extra: { name: 'USDC', version: '2', assetTransferMethod: 'permit2' } });
  const noName = requirements({ extra: { version: '2' } });
  const noVersion = requirements({ extra: { name: 'USDC' } });
  const noExtra = requirements({ extra: undefined });
  const free = requirements({ amount: '0' });
  const solana = requirements({ network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1' });
  const solanaOk = requirements({
    network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
    payTo: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin',
    asset: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
    extra: { feePayer: 'EKpQGSJtjMFqKZ9KQanSqYXRcF8fBopzLHYxdM65zcjm' },
  });
  const good = requirements({ amount: '20000' });
  const cheaperLater = requirements({ amount: '10000' });

  it('picks the first satisfiable entry in the seller order, not the cheapest', () => {
    assert.equal(selectAccept([upto, noName, noVersion, noExtra, free, solana, good, cheaperLater]), good);
  });

  it('defaults: any eip155 network, schemes exact and upto', () => {
    assert.equal(selectAccept([solana, mainnet, good]), mainnet);
    assert.equal(selectAccept([uptoOk, good]), uptoOk);
    assert.equal(selectAccept([uptoOk, good], { schemes: ['exact'] }), good);
  });

  it('upto needs the facilitator address and Permit2; exact via Permit2 is not signed', () => {
    assert.equal(selectAccept([upto]), undefined);
    assert.equal(selectAccept([uptoEip3009]), undefined);
    assert.equal(selectAccept([exactPermit2]), undefined);
    assert.equal(selectAccept([uptoNoMethod]), uptoNoMethod);
    assert.deepEqual(selectAccepts([upto, uptoOk, exactPermit2, good, solana]), [uptoOk, good]);
  });

  it("only the wallet's own network when it is known (Treasury refuses the others)", () => {
    assert.equal(selectAccept([mainnet, good], { walletNetwork: 'eip155:84532' }), good);
    assert.equal(selectAccept([mainnet], { walletNetwork: 'eip155:84532' }), undefined);
    assert.equal(
      selectAccept([mainnet, good], { networks: ['eip155:8453'], walletNetwork: 'eip155:84532' }),
      undefined,
    );
  });

  it('explicit networks narrow the choice', () => {
    assert.equal(selectAccept([mainnet, good], { networks: ['eip155:84532'] }), good);
    assert.equal(selectAccept([solana], { networks: ['solana:*'] }), undefined, 'an EVM payee and no fee payer');
    assert.equal(selectAccept([solanaOk], { networks: ['solana:*'] }), solanaOk);
    assert.equal(selectAccept([solanaOk]), solanaOk, 'solana:* is among the defaults');
    const { feePayer: _f, ...noFeePayer } = solanaOk.extra!;
    for (const bad of [
      { ...solanaOk, extra: noFeePayer },
      { ...solanaOk, extra: { ...solanaOk.extra, feePayer: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C' } },
      { ...solanaOk, extra: { ...solanaOk.extra, memo: 42 } },
      { ...solanaOk, scheme: 'upto' },
      { ...solanaOk, asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e' },
    ])
      assert.equal(selectAccept([bad]), undefined, JSON.stringify(bad));
    assert.equal(selectAccept([good, solanaOk], { walletNetwork: solanaOk.network }), solanaOk, "the wallet's network");
    assert.equal(selectAccept([good], { networks: ['solana:*'] }), undefined);
  });

  it('assets: only a network it names, in its asset (EVM addresses case-insensitively, Solana mints exactly)', () => {
    const cbBtc = requirements({ asset: '0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf', amount: '1000000' });
    const evm = { 'eip155:84532': good.asset.toLowerCase() };
    assert.deepEqual(selectAccepts([cbBtc, good], { assets: evm }), [good]);
    assert.deepEqual(selectAccepts([cbBtc], { assets: evm }), []);
    assert.deepEqual(selectAccepts([mainnet, good], { assets: evm }), [good], 'a network it does not name');
    const mint = solanaOk.asset;
    assert.deepEqual(selectAccepts([solanaOk], { assets: { [solanaOk.network]: mint } }), [solanaOk]);
    assert.deepEqual(selectAccepts([solanaOk], { assets: { [solanaOk.network]: mint.toLowerCase() } }), []);
    const otherMint = { ...solanaOk, asset: 'So11111111111111111111111111111111111111112' };
    assert.deepEqual(selectAccepts([otherMint, solanaOk], { assets: { [solanaOk.network]: mint } }), [solanaOk]);
    assert.deepEqual(selectAccepts([cbBtc, good]), [cbBtc, good], 'without assets, any asset');
  });

  it('network patterns: exact id or `<namespace>:*`, never a prefix of another namespace', () => {
    assert.equal(networkMatches(['eip155:*'], 'eip155:84532'), true);
    assert.equal(networkMatches(['eip155:84532'], 'eip155:84532'), true);
    assert.equal(networkMatches(['eip155:8453'], 'eip155:84532'), false);
    assert.equal(networkMatches(['eip155:*'], 'eip1550:1'), false);
    assert.equal(networkMatches(['eip155:*'], 'eip155:'), false);
    assert.equal(networkMatches([], 'eip155:1'), false);
  });
});
