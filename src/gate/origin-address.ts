/**
 * Which addresses the gate connects to for a seller's origin: globally reachable ones only
 * (src/shared/address-class.ts, the classifier of the API's outbound rules, src/api/net/vetted-fetch.ts), unless
 * the operator allows private ones (GATE_ALLOW_PRIVATE_ORIGINS=1: a gate in front of origins on its own network,
 * the sandbox, tests). An IP literal is judged before connecting; a host name is resolved by `vettedLookup`, the
 * `lookup` of the gate's origin agents, which vets every address the name has and hands the socket only a
 * vetted one — the address checked is the address connected to (no DNS rebinding window).
 *
 * Defends against: a seller's origin (or its DNS) pointing the gate at loopback, the gate's own network or
 * cloud metadata. Does not defend against: a global address that is nonetheless internal (egress rules), nor
 * ports (the origin's port was the platform's to vet when the origin was verified).
 */
import dns, { type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { classifyAddress } from '../shared/address-class.js';

/** The error a refused origin address fails the connection with. */
export const ORIGIN_REFUSED_CODE = 'EGATEORIGINREFUSED';

function refused(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`origin address refused for ${hostname}`), { code: ORIGIN_REFUSED_CODE });
}

/** Host names already classified (an origin's host is asked about on every request it is sent); bounded. */
const literalPrivate = new Map<string, boolean>();
const MAX_REMEMBERED_HOSTS = 4096;

/** For an origin whose host is an IP literal: whether connecting to it is refused (host names: see below). */
export function literalRefused(origin: URL, allowPrivate: boolean): boolean {
  if (allowPrivate) return false;
  const host = origin.hostname;
  let refusedLiteral = literalPrivate.get(host);
  if (refusedLiteral === undefined) {
    const literal = classifyAddress(host);
    refusedLiteral = literal.range !== 'invalid' && !literal.global;
    if (literalPrivate.size >= MAX_REMEMBERED_HOSTS) literalPrivate.clear();
    literalPrivate.set(host, refusedLiteral);
  }
  return refusedLiteral;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A node:net `lookup` that answers only vetted addresses, and fails when any address of the name is refused. */
export function vettedLookup(allowPrivate: boolean): LookupFunction {
  return ((hostname: string, options: { all?: boolean }, callback: LookupCallback) => {
    dns.lookup(hostname, { all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, options?.all ? [] : '', 0);
      const vetted = addresses.filter((a) => classifyAddress(a.address).global || allowPrivate);
      if (vetted.length === 0 || vetted.length !== addresses.length)
        return callback(refused(hostname), options?.all ? [] : '', 0);
      if (options?.all) return callback(null, vetted);
      return callback(null, vetted[0]!.address, vetted[0]!.family);
    });
  }) as LookupFunction;
}
