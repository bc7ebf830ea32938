/**
 * Which URL a 402's payment goes to, and whether the challenge may be paid there (x402-buyer.ts runs both
 * before a purchase is opened or anything is signed). The payment goes to the URL that answered 402: the
 * requested one, or where a redirect of the unpaid request led on the same origin (`Response.url`). It is paid
 * only when the challenge belongs to that origin: a 402 reached through a redirect to another origin, or a
 * challenge whose `resource.url` names another origin, is `ChallengeOriginMismatchError` (`challenge_origin_mismatch`).
 *
 * Defends against: a site that redirects the buyer to a real seller (or serves that seller's 402 verbatim)
 * receiving the payment signed for that seller, replaying it there and taking the content the buyer paid for.
 * Origins are compared as `URL` normalises them (scheme, lower-cased host, default port elided); a relative
 * `resource.url` names the origin that answered. One leniency: a challenge naming `http://host` is paid on
 * `https://host` (same host and port as written) — a seller behind a TLS-terminating proxy names the scheme it
 * sees (Treasury's gate writes `http://<Host>`, Koa's `ctx.href` without `proxy`), and the payment still goes to
 * that host, over TLS. Never the other way.
 * A page that copies a seller's 402 and names itself as the resource passes this rule; for a Treasury wallet the
 * pay request carries the origin that answered, and Treasury refuses a Treasury seller's payee there
 * (buyer-payer.ts, src/api/pay/refuse-challenge-origin.ts).
 * Does not defend against: a fetch given as the buyer's `fetch` that follows redirects and does not say where
 * it ended (`Response.url` empty: the requested URL is taken, and `resource.url` is still checked); two services
 * of different owners on one origin.
 */
import type { PaymentRequired } from '../x402/wire-schemas.js';
import { ChallengeOriginMismatchError } from './sdk-errors.js';

/** The URL `answer` came from: its final URL after redirects when the fetch says, else the requested one. */
export function answeredUrl(requested: string, answer: Response): string {
  return answer.url === '' ? requested : answer.url;
}

/** The origin of `url` resolved against `base`; null when it is not a URL. */
function originOf(url: string, base?: string): URL | null {
  try {
    return new URL(url, base);
  } catch {
    return null;
  }
}

/** `named` is `paid`'s origin, or its plain-http form (same host and port as written) when paid over https. */
function sameSeller(named: URL, paid: URL): boolean {
  if (named.origin === paid.origin) return true;
  return named.protocol === 'http:' && paid.protocol === 'https:' && named.host === paid.host;
}

/**
 * Throws ChallengeOriginMismatchError unless the 402 that `answered` came from `requested`'s origin and the
 * challenge's resource is on it. Returns the URL the payment goes to (the one that answered).
 */
export function checkChallengeOrigin(requested: string, answered: string, challenge: PaymentRequired): string {
  const asked = new URL(requested);
  const paid = originOf(answered);
  if (paid === null || paid.origin !== asked.origin)
    throw new ChallengeOriginMismatchError('redirect', asked.origin, paid?.origin ?? null);
  const named = originOf(challenge.resource.url, paid.href);
  if (named === null || !sameSeller(named, paid))
    throw new ChallengeOriginMismatchError('resource', paid.origin, named?.origin ?? null);
  return paid.href;
}
