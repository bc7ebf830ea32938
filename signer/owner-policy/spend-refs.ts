/**
 * The references of the spends this process records in the signer's store (32 lower-case hex characters, as the
 * store's check requires): a random 64-bit prefix drawn once per process, then a counter. Unique across the
 * processes that share a store (two prefixes meet with probability 2⁻⁶⁴ per pair; the store's unique key refuses
 * the batch that would repeat one), and rising within a process, so the references' index grows at its right edge
 * instead of taking a random page for every insert, and no batch waits on the system's random source.
 *
 * Defends: a spend given back (deleted) that is not the one recorded — references never repeat.
 * Does not defend: secrecy — a reference is no capability; it never leaves the signer process.
 */
import { randomBytes } from 'node:crypto';

const PREFIX = randomBytes(8).toString('hex');
let next = 0n;

/** The next spend reference of this process. */
export function nextSpendRef(): string {
  const ref = PREFIX + next.toString(16).padStart(16, '0');
  next++;
  return ref;
}
