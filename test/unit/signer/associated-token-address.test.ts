/**
 * The signer's associated token account, kept per triple (signer/solana/associated-token-address.ts): every answer,
 * first or kept, is the account the official token program helper derives for that triple, whichever order the
 * triples come in — a kept answer never stands for another owner, mint or program.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { findAssociatedTokenPda, TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import { associatedTokenAddress } from '../../../signer/solana/associated-token-address.js';

const newAddress = async (): Promise<Address> => (await generateKeyPairSigner()).address;

describe('signer: associated token accounts, kept', () => {
  it('answers, first and again, the account the token program helper derives for each triple', async () => {
    const owners = await Promise.all([0, 1, 2, 3].map(newAddress));
    const mints = await Promise.all([0, 1].map(newAddress));
    const programs = [TOKEN_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS];
    const triples = owners.flatMap((owner) => mints.flatMap((mint) => programs.map((p) => [owner, mint, p] as const)));
    const expected = new Map<string, Address>();
    for (const [owner, mint, tokenProgram] of triples) {
      const [pda] = await findAssociatedTokenPda({ owner, mint, tokenProgram });
      expected.set(`${owner}/${mint}/${tokenProgram}`, pda);
    }
    assert.equal(new Set(expected.values()).size, triples.length, 'every triple has an account of its own');
    // Three passes, the second and third in other orders: the first derives, the others are answered as kept.
    for (const order of [triples, [...triples].reverse(), [...triples.slice(5), ...triples.slice(0, 5)]]) {
      for (const [owner, mint, tokenProgram] of order) {
        assert.equal(
          await associatedTokenAddress(owner, mint, tokenProgram),
          expected.get(`${owner}/${mint}/${tokenProgram}`),
        );
      }
    }
  });
});
