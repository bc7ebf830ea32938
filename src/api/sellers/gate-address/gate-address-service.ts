/**
 * Proof that an account's gate answers at the public address it names (docs/gate.md#the-gates-public-address),
 * mirroring a seller's origin proof (../origin/seller-origin-verification.ts): the account is issued one token,
 * kept; its gate serves it at `/.well-known/xx-gate-verification.txt`; the platform fetches that file itself,
 * through the same vetted outbound path and address rules as origins (../origin/origin-verifier.ts:
 * TREASURY_VERIFY_ALLOW_PRIVATE, the allowed ports, no redirects, 4 KiB), and only then marks the URL verified.
 * The public catalogue lists the account's managed-proxy sellers at a verified address only
 * (src/api/discovery/discovery-store.ts).
 *
 *
 * A gate that routes by host (GATE_BASE_DOMAIN) names its base domain too; once the URL is verified, the same call
 * fetches the token from `<scheme>://<random label>.<base domain>[:<port>]/.well-known/xx-gate-verification.txt`
 * (the URL's scheme and port; a label of 20 hex digits from the CSPRNG, new each time, so only a name that answers
 * for the whole domain — a wildcard record pointing at this account's gate — proves it) under the same rules, and
 * marks the domain verified (src/api/pay/challenge-origin-binding.ts then binds the account's managed-proxy
 * payees to `<slug>.<domain>` too). The two proofs are independent: a URL verified while its domain is not stays
 * verified (the answer is 200, `base_domain_verified_at` null, `base_domain_error` the domain's error code); a URL
 * that fails is answered with its error and the domain is not tried.
 *
 * Defends: an account listing its sellers at an address it does not control (someone else's host, another
 * account's gate: the token is per account); an account proving a domain where one fixed name, not every name,
 * answers with its token (the label is random), or a domain another account's gate serves (that gate serves its
 * own account's token); a production address over plain HTTP; one account holding more than one verification's
 * outbound fetches at a time (its concurrent calls share the one running: each fetch may wait seconds on a slow
 * name server, and the process's DNS lookups are a shared, bounded pool); an address or domain changed after its proof
 * staying listed or bound (a new URL or domain is unproven); a file that only mentions the token in a longer line
 * (../origin/origin-verifier.ts `servesToken`); an address or domain that changes hands after it was proven staying
 * proven — src/api/sellers/proofs/ fetches each again through `fetchGateToken` (the domain under a fresh random
 * label, `baseDomainFile`) at most once per TREASURY_PROOF_RECHECK_SECONDS and withdraws a proof whose file no
 * longer serves the token, or that stays unreachable longer than TREASURY_PROOF_GRACE_SECONDS (each proof on its
 * own; a domain is re-checked only while its URL is proven). Does not defend: a new owner serving the old token,
 * or the time between two re-checks.
 */
import { randomBytes } from 'node:crypto';
import {
  canonicalGateUrl,
  GATE_VERIFICATION_PATH,
  hostRoutedOrigin,
  type GateAddressBody,
  type GateAddressView,
} from '../../../shared/gate-address-schema.js';
import { AppError } from '../../errors/app-error.js';
import { guardedFetchText, servesToken, type OriginFetchOptions } from '../origin/origin-verifier.js';
import type { GateAddressRow, PgGateAddressStore } from './gate-address-store.js';

const MAX_BYTES = 4096;

/** Hex digits of the random label a base domain is proven at (10 bytes from the CSPRNG). */
const LABEL_BYTES = 10;

export interface GateAddressServiceDeps {
  store: Pick<PgGateAddressStore, 'find' | 'set' | 'markVerified' | 'markBaseDomainVerified'>;
  clock: () => Date;
  outbound: OriginFetchOptions;
  /** Production mode: the address must be https. */
  requireHttps: boolean;
}

function viewOf(row: GateAddressRow): GateAddressView {
  return {
    account_id: row.account_id,
    url: row.url,
    network: row.network,
    path: GATE_VERIFICATION_PATH,
    token: row.verification_token,
    verified_at: row.verified_at?.toISOString() ?? null,
    base_domain: row.base_domain,
    base_domain_verified_at: row.base_domain_verified_at?.toISOString() ?? null,
  };
}

/** Where a base domain is proven: the verification file at a fresh random label under it, as the URL names it. */
export function baseDomainFile(url: string, baseDomain: string): URL {
  const origin = hostRoutedOrigin(url, baseDomain, randomBytes(LABEL_BYTES).toString('hex'));
  // The stored URL and domain passed the shared schemas: a hex label under them is always a host name.
  if (origin === undefined) throw new AppError('internal_error');
  return new URL(GATE_VERIFICATION_PATH, origin);
}

/**
 * GETs `file` under the origin verifier's rules (4 KiB, no redirects, the operator's address rules); refused
 * (`gate_verification_token_mismatch`) unless a line of it is `token`. The first proofs and every re-check go
 * through here.
 */
export async function fetchGateToken(file: URL, token: string, outbound: OriginFetchOptions): Promise<void> {
  const body = await guardedFetchText(file, {
    ...outbound,
    maxBytes: MAX_BYTES,
    notFound: 'gate_verification_not_found',
  });
  if (!servesToken(body, token))
    throw new AppError('gate_verification_token_mismatch', { fields: { expected_file: file.toString() } });
}

export class GateAddressService {
  /**
   * Per account, the verification running and the one to run after it: a call arriving while one runs joins the
   * next one, which reads the stored address only once the running one ended (so a call never gets an answer made
   * before it; bounded by the accounts verifying).
   */
  private readonly verifying = new Map<string, { running: Promise<unknown>; next?: Promise<GateAddressView> }>();

  constructor(private readonly deps: GateAddressServiceDeps) {}

  async read(accountId: string): Promise<GateAddressView> {
    const row = await this.deps.store.find(accountId);
    if (!row) throw new AppError('gate_address_not_set');
    return viewOf(row);
  }

  /** Names the account's gate address (unproven unless it is the one already proven) and its token. */
  async set(accountId: string, body: GateAddressBody): Promise<GateAddressView> {
    const url = canonicalGateUrl(body.url);
    if (this.deps.requireHttps && !url.startsWith('https://'))
      throw new AppError('invalid_request', { message: "The gate's public address must be https in production." });
    const token = `xx-gate-${randomBytes(16).toString('hex')}`;
    const address = { url, network: body.network, baseDomain: body.base_domain ?? null };
    return viewOf(await this.deps.store.set(accountId, address, token));
  }

  /**
   * Fetches the account's verification file from its gate address and marks that address verified; then, with a
   * base domain, from a random name under it, and marks the domain verified (or says why not: see the header).
   */
  verify(accountId: string): Promise<GateAddressView> {
    const slot = this.verifying.get(accountId);
    if (!slot) return this.run(accountId);
    slot.next ??= slot.running.then(() => this.run(accountId));
    return slot.next;
  }

  /** Runs one verification as the account's running one; its slot goes when it ends, unless a next one waits. */
  private run(accountId: string): Promise<GateAddressView> {
    const result = this.verifyOnce(accountId);
    const running = result.then(
      () => undefined,
      () => undefined,
    );
    this.verifying.set(accountId, { running });
    void running.then(() => {
      const slot = this.verifying.get(accountId);
      if (slot?.running === running && !slot.next) this.verifying.delete(accountId);
    });
    return result;
  }

  private async verifyOnce(accountId: string): Promise<GateAddressView> {
    const row = await this.deps.store.find(accountId);
    if (!row) throw new AppError('gate_address_not_set');
    const file = new URL(GATE_VERIFICATION_PATH, row.url);
    await this.fetchToken(file, row.verification_token);
    const marked = await this.deps.store.markVerified(accountId, row.url, this.deps.clock());
    if (!marked)
      throw new AppError('gate_verification_token_mismatch', {
        message: "The gate's address changed while it was being verified; verify the new address.",
        fields: { expected_file: file.toString() },
      });
    if (marked.base_domain === null) return viewOf(marked);
    return this.verifyBaseDomain(accountId, { ...marked, base_domain: marked.base_domain });
  }

  /** The base domain's proof, the URL's standing: the view with it verified, or with the error that refused it. */
  private async verifyBaseDomain(
    accountId: string,
    row: GateAddressRow & { base_domain: string },
  ): Promise<GateAddressView> {
    const address = { url: row.url, baseDomain: row.base_domain };
    try {
      await this.fetchToken(baseDomainFile(row.url, row.base_domain), row.verification_token);
    } catch (err) {
      if (!(err instanceof AppError) || err.code === 'internal_error') throw err;
      return { ...viewOf(row), base_domain_error: err.code };
    }
    const marked = await this.deps.store.markBaseDomainVerified(accountId, address, this.deps.clock());
    // Changed meanwhile: the new URL or domain is unproven; answer what is stored now.
    if (!marked) return this.read(accountId);
    return viewOf(marked);
  }

  /** GETs `file` and refuses it unless it serves `token` (`fetchGateToken`). */
  private fetchToken(file: URL, token: string): Promise<void> {
    return fetchGateToken(file, token, this.deps.outbound);
  }
}
