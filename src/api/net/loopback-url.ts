/**
 * Whether a URL points at this machine: its host is `localhost` or a loopback address (127.0.0.0/8, ::1, as
 * ../../shared/address-class.ts classifies it). For the sandbox's own services, which the API names only when they
 * are local (its faucets: ../config/app-config.ts).
 *
 * Defends: a sandbox setting that would send a wallet address to a faucet off the machine. Does not defend: a
 * local process pretending to be the faucet.
 */
import { isLoopbackHost } from '../../shared/loopback-host.js';

export function isLoopbackUrl(text: string): boolean {
  let host: string;
  try {
    host = new URL(text).hostname;
  } catch {
    return false;
  }
  return isLoopbackHost(host);
}
