/**
 * The free text of the signer's wire — an owner's sign-in message (SIWE and SIWS) and an EIP-712 domain's name and
 * version — held by a real signer process (with its policy store) to the API's one stored-text rule
 * (base/storable-text.ts): a NUL or other C0 or C1 control, DEL, a lone surrogate, a bidirectional control or mark, a
 * zero width space, a byte order mark, a line or paragraph separator or a tag character is refused `invalid_request`
 * whatever the front sent, even in a sign-in the owner's key did sign; line breaks and tabs only in the sign-in (prose).
 * Nothing is kept (no account is recorded) and nothing is signed; text the rule allows (a joiner, accents) still passes.
 */
import assert from 'node:assert/strict';
import { ed25519 } from '@noble/curves/ed25519.js';
import { base58 } from '@scure/base';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { signerErrorReplySchema, type SignerErrorCode } from '../../../signer/protocol/signer-protocol.js';
import { newSolanaSigner, siwsAttestation } from '../../support/sign-in.js';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import {
  BASE_SEPOLIA_USDC,
  buildAuthorization,
  openRawConnection,
  PERMIT2_DOMAIN,
  type RawConnection,
} from './signer-test-helpers.js';

/** Refused in every field of free text, prose included: one of each class the rule names. */
const UNSTORABLE = [
  '\u0000',
  '\u0007',
  '\u000b',
  '\u001b',
  '\u007f',
  '\u0085',
  '\u009f',
  '\ud800',
  '\udfff',
  '\u061c',
  '\u200b',
  '\u200e',
  '\u200f',
  '\u2028',
  '\u2029',
  '\u202a',
  '\u202e',
  '\u2066',
  '\u2069',
  '\ufeff',
  '\u{e0001}',
  '\u{e007f}',
];
/** Refused in one line of text (a domain's name and version), allowed in prose (a sign-in message). */
const LINE_CONTROLS = ['\t', '\n', '\r'];
/** Allowed everywhere: the zero width non-joiner and joiner, accented letters. */
const STORABLE = ['\u200c', '\u200d', 'é'];
const STATEMENT = 'Sign in to Treasury';
const show = (c: string) => [...c].map((x) => `U+${x.codePointAt(0)!.toString(16).padStart(4, '0')}`).join('');
const withChar = (c: string) => `Sign in${c} to Treasury`;

describe('treasury-signer: free text on the wire follows the stored-text rule', function () {
  this.timeout(180_000);
  let signer: TestSigner;
  let conn: RawConnection;
  let store: pg.Client;
  let account: string;
  let wallet: { wallet_key_ref: string; address: string };
  let n = 0;

  const ask = (method: string, params: unknown) => conn.request({ v: 1, id: `t${n++}`, method, params });
  /** The reply's error code (`ok` for a success). */
  const outcome = async (method: string, params: unknown): Promise<SignerErrorCode | 'ok'> => {
    const reply = await ask(method, params);
    if (reply?.ok === true) return 'ok';
    const parsed = signerErrorReplySchema.safeParse(reply);
    assert.ok(parsed.success, `not a protocol reply: ${JSON.stringify(reply).slice(0, 300)}`);
    return parsed.data.error.code;
  };
  const accounts = async () => Number((await store.query('SELECT count(*) AS n FROM signer_accounts')).rows[0].n);

  /** A SIWE owner authority whose message carries `c` in its statement, signed by the owner's key over that text. */
  async function siweAuthority(c: string) {
    const owner = privateKeyToAccount(generatePrivateKey());
    const message = createSiweMessage({
      address: owner.address,
      chainId: 84532,
      domain: '127.0.0.1',
      nonce: 'abcdef0123456789',
      statement: STATEMENT,
      uri: 'http://127.0.0.1/',
      version: '1',
      issuedAt: new Date(),
    }).replace(STATEMENT, withChar(c));
    return {
      kind: 'owner',
      address: owner.address,
      sign_in: { message, signature: await owner.signMessage({ message }) },
    };
  }

  /** A SIWS owner authority whose message carries `c` in its statement, signed by the owner's key over that text. */
  function siwsAuthority(c: string) {
    const owner = newSolanaSigner();
    const message = siwsAttestation(owner, 'abcdef0123456789').message.replace(STATEMENT, withChar(c));
    const signature = base58.encode(ed25519.sign(new TextEncoder().encode(message), owner.secret));
    return { kind: 'owner', address: owner.address, sign_in: { scheme: 'siws', message, signature } };
  }

  /** The two signing methods that take an EIP-712 domain, with `domain` in place of the token's own. */
  function domainRequests(domain: Record<string, unknown>) {
    const base = { account_key_ref: account, wallet_key_ref: wallet.wallet_key_ref, address: wallet.address, domain };
    return [
      ['sign_transfer_authorization', { ...base, message: buildAuthorization(wallet.address, n) }],
      [
        'sign_eip2612_permit',
        {
          ...base,
          message: {
            owner: wallet.address,
            spender: PERMIT2_DOMAIN.verifyingContract,
            value: '1000',
            nonce: '0',
            deadline: String(Math.floor(Date.now() / 1000) + 600),
          },
        },
      ],
    ] as const;
  }

  before(async () => {
    signer = await startTestSigner({ policyStore: true });
    store = new pg.Client({ connectionString: signer.policyStore!.connectionString });
    await store.connect();
    account = (await signer.client.createAccountKey()).account_key_ref;
    wallet = await signer.client.createWalletKey({ account_key_ref: account });
    conn = openRawConnection(signer.socketPath);
  });
  after(async () => {
    conn?.close();
    await store?.end();
    await signer?.stop();
  });

  it("refuses an owner's sign-in holding such text, though the owner's key signed it, and records no account", async () => {
    const before = await accounts();
    for (const c of UNSTORABLE) {
      for (const [scheme, authority] of [
        ['siwe', await siweAuthority(c)],
        ['siws', siwsAuthority(c)],
      ] as const) {
        const code = await outcome('create_account_key', { authority });
        assert.equal(code, 'invalid_request', `${scheme} sign-in with ${show(c)}`);
      }
    }
    assert.equal(await accounts(), before, 'no account was recorded');
  });

  it("refuses an EIP-712 domain's name or version holding such text, or a line break or tab, and signs nothing", async () => {
    for (const c of [...UNSTORABLE, ...LINE_CONTROLS]) {
      for (const field of ['name', 'version'] as const) {
        const domain = { ...BASE_SEPOLIA_USDC, [field]: `${BASE_SEPOLIA_USDC[field]}${c}` };
        for (const [method, params] of domainRequests(domain)) {
          const code = await outcome(method, params);
          assert.equal(code, 'invalid_request', `${method} domain.${field} with ${show(c)}`);
        }
      }
    }
  });

  it('takes what the rule allows: line breaks, tabs, joiners and accents in a sign-in; joiners and accents in a domain', async () => {
    for (const c of [...LINE_CONTROLS, ...STORABLE]) {
      for (const authority of [await siweAuthority(c), siwsAuthority(c)]) {
        const reply = await ask('create_account_key', { authority });
        assert.equal(reply.ok, true, `sign-in with ${show(c)}: ${JSON.stringify(reply).slice(0, 300)}`);
        assert.equal(reply.result.authority.kind, 'owner');
      }
    }
    for (const c of STORABLE) {
      for (const [method, params] of domainRequests({ ...BASE_SEPOLIA_USDC, name: `US${c}DC` })) {
        assert.equal(await outcome(method, params), 'ok', `${method} domain.name with ${show(c)}`);
      }
    }
  });
});
