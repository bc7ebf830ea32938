/**
 * A Prometheus histogram over a bench phase, from two scrapes of the same process (before and after): how
 * many observations, their mean, and the bucket bound that holds the 99th percentile. For ./steady-tail.ts, to
 * split the API's view of a signer call (treasury_signer_call_duration_seconds) into the signer's own time
 * (treasury_signer_request_duration_seconds) and the rest (the socket, both event loops).
 *
 * Pure: text in, numbers out. Limits: the series must be named exactly as exposed (labels in their order);
 * the 99th percentile is a bucket's upper bound, as coarse as the buckets.
 */
export interface HistogramDelta {
  count: number;
  meanMs: number;
  /** The upper bound (ms) of the first bucket holding 99 % of the observations; Infinity past the last. */
  p99BoundMs: number;
}

/** `name` with `labels` (e.g. `method="sign"`) between the scrapes `before` and `after`. */
export function histogramDelta(before: string, after: string, name: string, labels: string): HistogramDelta {
  const value = (text: string, series: string) => {
    const at = text.indexOf(`\n${series} `);
    return at < 0 ? 0 : Number(text.slice(at + series.length + 2, text.indexOf('\n', at + 1)));
  };
  const delta = (series: string) => value(after, series) - value(before, series);
  const count = delta(`${name}_count{${labels}}`);
  const sum = delta(`${name}_sum{${labels}}`);
  const bounds = [...after.matchAll(new RegExp(`\\n${name}_bucket\\{([^}]*)\\} `, 'g'))]
    .map((m) => m[1]!)
    .filter((l) => l.includes(labels))
    .map((l) => ({ series: `${name}_bucket{${l}}`, le: /le="([^"]+)"/.exec(l)?.[1] ?? '+Inf' }));
  const hit = bounds.find((b) => delta(b.series) >= count * 0.99);
  const le = hit?.le ?? '+Inf';
  return {
    count,
    meanMs: count > 0 ? (sum / count) * 1000 : NaN,
    p99BoundMs: le === '+Inf' ? Infinity : Number(le) * 1000,
  };
}

/** "n, mean x ms, p99 ≤ y ms". */
export function describeHistogram(h: HistogramDelta): string {
  const p99 = Number.isFinite(h.p99BoundMs) ? `≤ ${h.p99BoundMs.toFixed(1)}` : '> last bucket';
  return `${h.count}, mean ${h.meanMs.toFixed(1)} ms, p99 ${p99} ms`;
}
