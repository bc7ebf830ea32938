/**
 * Whether a URL points at this machine: an http(s) URL whose host is `localhost` or a loopback address, by the
 * project's one rule (../../shared/loopback-host.ts). For the sandbox's own services, which the API names only when
 * they are local (its faucets: ../config/app-config.ts).
 *
 * Defends: a sandbox setting that would send a wallet address to a faucet off the machine. Does not defend: a
 * local process pretending to be the faucet.
 */
import { isLoopbackHttpUrl } from '../../shared/loopback-host.js';

/** An http(s) URL on this machine (any other scheme, or no URL: false). */
export function isLoopbackUrl(text: string): boolean {
  return isLoopbackHttpUrl(text);
}
