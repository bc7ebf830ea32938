/**
 * How close payments through the API can come to the raw HSM rate on this machine, and where a payment's CPU
 * goes beyond that, from parts measured in the same run of `npm run bench`:
 * - the steady floor's processes (./steady-floor.ts: an HTTP front, an echo process over a unix socket, one
 *   group-committed insert, and the bench's own load generator) — a payment's hand-offs with none of its work —
 *   driven closed-loop at saturation, and again at the rate phase (a) reached;
 * - the raw ceiling's CPU a signature (SoftHSM's own work) and the signer's required work a signature
 *   (./signer-ratio-bound.ts: the digest, low-S, yParity and the recovery check).
 *
 * Why: when everything shares the machine's cores (SoftHSM, PostgreSQL, the services and the load generator),
 * payments go at most cores ÷ (floor at saturation + raw + required) a second, whatever the services' own code
 * costs: the bound says how much of the distance to a goal set as a ratio to raw is this machine's and how much
 * the service's. The floor's front is bare node:http, its echo does no framing or validation, its insert is one
 * narrow row, and at saturation it answers many times (a)'s rate, which makes each hand-off cheaper (more
 * requests a wake-up): the bound errs high. Each part's cost beyond the floor is read against the floor driven at
 * (a)'s own rate instead, so that the wake-ups a request costs at that rate are the floor's too.
 */
import { signatureMicros as signatureCost, type SignerRatioBound } from './signer-ratio-bound.js';

/** CPU a request (the floor) or a payment (a pay phase) by part, µs. */
export interface PartsMicros {
  /** The HTTP front: the floor's node:http process, or the API. */
  front: number;
  /** The hop behind it: the floor's echo process, or the signer. */
  hop: number;
  /** PostgreSQL's processes. */
  postgres: number;
  /** The bench's own process (the load generator). */
  load: number;
  /** The whole machine's. */
  machine: number;
}

/** One drive of the floor: the requests a second it answered and its CPU a request by part. */
export interface FloorDrive extends PartsMicros {
  rate: number;
}

export interface PayRatioBound {
  /** The floor driven closed-loop at the pay phases' concurrency. */
  saturated: FloorDrive;
  /** The HSM's raw and the signer's required work a signature, µs. */
  signatureMicros: number;
  /** The machine's CPU a payment could cost at least, µs: the saturated floor + raw + required. */
  leastMachineMicros: number;
  /** Payments a second at most: cores ÷ leastMachineMicros. */
  rate: number;
  /** rate ÷ the raw HSM rate of the same run. */
  bound: number;
}

/** The bound from the floor at saturation, the signer's bound and the raw rate of the same run, on `cores` cores. */
export function payRatioBound(
  saturated: FloorDrive,
  signer: SignerRatioBound,
  rawRate: number,
  cores: number,
): PayRatioBound {
  const signatureMicros = signatureCost(signer);
  const leastMachineMicros = saturated.machine + signatureMicros;
  const rate = (cores * 1e6) / leastMachineMicros;
  return { saturated, signatureMicros, leastMachineMicros, rate, bound: rate / rawRate };
}

const signed = (value: number) => `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(0)}`;

/**
 * The bound as `npm run bench` prints it, beside the pay phases' measured ratios (label → rate ÷ raw); with
 * `paid` (a pay phase's CPU a payment by part, and the floor driven at that phase's rate), what each part spent
 * beyond the floor's same part — the signer beyond the echo, the HSM's raw and the required work.
 */
export function payRatioBoundLine(
  b: PayRatioBound,
  measured: ReadonlyArray<readonly [string, number]>,
  paid?: { label: string; micros: PartsMicros; floor: FloorDrive },
): string {
  const f = b.saturated;
  const line =
    `the payments' ceiling beside the HSM's (./support/pay-ratio-bound.ts): the steady floor at saturation ` +
    `${f.rate.toFixed(0)}/s, the machine's CPU ${f.machine.toFixed(0)} µs a request; with the HSM's raw and the ` +
    `signer's required work, at least ${b.leastMachineMicros.toFixed(0)} µs of machine CPU a payment, so at most ` +
    `${b.rate.toFixed(0)}/s, ${b.bound.toFixed(2)}× raw, for a service that did nothing else; measured ` +
    measured.map(([label, ratio]) => `${label} ${ratio.toFixed(2)}×`).join(', ');
  if (!paid) return line;
  const p = paid.micros;
  const at = paid.floor;
  return (
    `${line}. The floor at ${paid.label}'s rate (${at.rate.toFixed(0)}/s), µs a request: front ${at.front.toFixed(0)}, ` +
    `echo ${at.hop.toFixed(0)}, PostgreSQL ${at.postgres.toFixed(0)}, load generator ${at.load.toFixed(0)}, machine ` +
    `${at.machine.toFixed(0)}; a payment of ${paid.label} beyond it: the API ${signed(p.front - at.front)} over the ` +
    `front, the signer ${signed(p.hop - at.hop - b.signatureMicros)} over the echo, the HSM's raw and the required ` +
    `work, PostgreSQL ${signed(p.postgres - at.postgres)}, the load generator ${signed(p.load - at.load)}, the ` +
    `machine ${signed(p.machine - at.machine - b.signatureMicros)}`
  );
}
