/**
 * Associated token accounts, kept (src/api/chain/kept-token-accounts.ts): first and again, in any order, the
 * accounts the official token program helper derives for the owner and mint under SPL Token and Token-2022, both
 * for a pair and for one (owner, mint, program) triple as a Solana payment's message names it — a kept answer
 * never stands for another owner, mint or program.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { findAssociatedTokenPda, TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import { keptTokenAccount, keptTokenAccounts } from '../../../src/api/chain/kept-token-accounts.js';

const newAddress = async (): Promise<Address> => (await generateKeyPairSigner()).address;

describe('chain: associated token accounts of a payee, kept', () => {
  it('answers, first and again, the accounts the token program helper derives for each owner and mint', async () => {
    const owners = await Promise.all([0, 1, 2].map(newAddress));
    const mints = await Promise.all([0, 1].map(newAddress));
    const pairs = owners.flatMap((owner) => mints.map((mint) => [owner, mint] as const));
    const expected = new Map<string, string[]>();
    for (const [owner, mint] of pairs) {
      const accounts: string[] = [];
      for (const tokenProgram of [TOKEN_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS])
        accounts.push((await findAssociatedTokenPda({ owner, mint, tokenProgram }))[0]);
      expected.set(`${owner}/${mint}`, accounts);
    }
    for (const order of [pairs, [...pairs].reverse()]) {
      for (const [owner, mint] of order) {
        assert.deepEqual(
          [...(await keptTokenAccounts(owner, mint))].sort(),
          [...expected.get(`${owner}/${mint}`)!].sort(),
        );
      }
    }
  });

  it("answers one triple's account as the helper derives it, never another program's or owner's", async () => {
    const [owner, other, mint] = await Promise.all([0, 1, 2].map(newAddress));
    for (const round of [1, 2]) {
      for (const tokenProgram of [TOKEN_2022_PROGRAM_ADDRESS, TOKEN_PROGRAM_ADDRESS]) {
        for (const who of [owner!, other!]) {
          const [expected] = await findAssociatedTokenPda({ owner: who, mint: mint!, tokenProgram });
          assert.equal(await keptTokenAccount(who, mint!, tokenProgram), expected, `round ${round}`);
        }
      }
    }
    assert.deepEqual(await keptTokenAccounts(owner!, mint!), [
      await keptTokenAccount(owner!, mint!, TOKEN_PROGRAM_ADDRESS),
      await keptTokenAccount(owner!, mint!, TOKEN_2022_PROGRAM_ADDRESS),
    ]);
  });

  it('keeps nothing for an address that does not decode', async () => {
    const mint = await newAddress();
    await assert.rejects(keptTokenAccounts('not an address', mint));
    await assert.rejects(keptTokenAccounts('not an address', mint), 'refused again, not answered from memory');
  });
});
