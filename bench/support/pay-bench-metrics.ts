/**
 * What `npm run bench` reads from the API's Prometheus scrapes (treasury_* and prom-client's default metrics)
 * between two moments of the run: a histogram's mean over everything so far, a series' value, per phase where
 * payments took their snapshot and how many shared a statement, a histogram's p99 bucket bound and mean over one
 * phase, and garbage collections by kind.
 *
 * Pure: text in, a report's words out. Limits: series are matched as exposed (labels in their order); a p99 is a
 * bucket's upper bound, as coarse as the buckets.
 */

/** A histogram's mean in one scrape, ms, as text with two decimals. */
export function averageMs(metrics: string, name: string, labels: string): string {
  const sum = Number(metrics.match(new RegExp(`${name}_sum\\{${labels}\\} ([0-9.e+-]+)`))?.[1]);
  const count = Number(metrics.match(new RegExp(`${name}_count\\{${labels}\\} ([0-9.e+-]+)`))?.[1]);
  return ((sum / count) * 1000).toFixed(2);
}

/** A series' value in one scrape (0 when absent); `series` is the name with its labels, as exposed. */
export function seriesValue(text: string, series: string): number {
  const at = text.indexOf(`\n${series} `);
  return at < 0 ? 0 : Number(text.slice(at + series.length + 2, text.indexOf('\n', at + 1)));
}

/** Per phase: where reservations took their snapshot, and how many payments shared a write or a record statement. */
export function phaseLine(label: string, before: string, after: string, ops: number): string {
  const delta = (series: string) => seriesValue(after, series) - seriesValue(before, series);
  const perStatement = (histogram: string) =>
    (delta(`${histogram}_sum`) / Math.max(1, delta(`${histogram}_count`))).toFixed(2);
  const read = delta('treasury_pay_snapshots_total{source="read"}');
  const remembered = delta('treasury_pay_snapshots_total{source="remembered"}');
  // A remembered snapshot whose velocity window was read on (policy/velocity-window.ts), not read in full.
  const readOn = delta('treasury_pay_snapshots_total{source="velocity_read_on"}');
  const windowReadOn =
    readOn > 0 ? `, remembered with its velocity window read on ${((readOn / ops) * 100).toFixed(1)} %` : '';
  // A capped PAT's total: checked on what this process remembers, or read under the PAT's lock (decided alone).
  const patRead = delta('treasury_pat_cap_checks_total{source="read"}');
  const patRemembered = delta('treasury_pat_cap_checks_total{source="remembered"}');
  const pat =
    patRead + patRemembered > 0
      ? `; the PAT's cap checked on its remembered total ${((patRemembered / ops) * 100).toFixed(0)} %, under its lock ${((patRead / ops) * 100).toFixed(0)} %`
      : '';
  const retries = delta('treasury_pay_conflict_retries_total{kind="pay"}');
  return `${label}: snapshots read ${((read / ops) * 100).toFixed(0)} %, remembered ${((remembered / ops) * 100).toFixed(0)} %${windowReadOn}; decisions per write statement ${perStatement('treasury_pay_decision_write_batch_size')}, signatures per record statement ${perStatement('treasury_pay_signature_record_batch_size')}${pat}${retries > 0 ? `; taken again ${retries}` : ''}`;
}

/** The p99 bucket bound of a histogram series between two scrapes, ms, and its mean: `≤5 (mean 1.3)`. */
export function p99Between(before: string, after: string, name: string, labels: string): string {
  const buckets = (text: string) =>
    [
      ...text.matchAll(
        new RegExp(`${name}_bucket\\{(?:le="([^"]+)",${labels}|${labels},le="([^"]+)")\\} ([0-9.e+-]+)`, 'g'),
      ),
    ].map((m) => ({ le: (m[1] ?? m[2])!, n: Number(m[3]) }));
  const afterBuckets = buckets(after);
  const beforeBuckets = new Map(buckets(before).map((b) => [b.le, b.n]));
  const diff = afterBuckets.map((b) => ({ le: b.le, n: b.n - (beforeBuckets.get(b.le) ?? 0) }));
  const total = diff.at(-1)?.n ?? 0;
  const hit = diff.find((b) => b.n >= total * 0.99);
  const sum = (text: string) => Number(text.match(new RegExp(`${name}_sum\\{${labels}\\} ([0-9.e+-]+)`))?.[1] ?? 0);
  const mean = total > 0 ? (((sum(after) - sum(before)) / total) * 1000).toFixed(1) : '?';
  return `${hit ? (hit.le === '+Inf' ? '>max' : `≤${(Number(hit.le) * 1000).toFixed(0)}`) : '?'} (mean ${mean})`;
}

/** The API's garbage collections between two scrapes: count and total time per kind, and per 1,000 payments (prom-client default metrics). */
export function gcBetween(before: string, after: string, ops: number): string {
  return ['minor', 'major', 'incremental']
    .map((kind) => {
      const read = (text: string, what: 'sum' | 'count') =>
        Number(
          text.match(new RegExp(`treasury_nodejs_gc_duration_seconds_${what}\\{kind="${kind}"\\} ([0-9.e+-]+)`))?.[1] ??
            0,
        );
      const n = read(after, 'count') - read(before, 'count');
      const ms = (read(after, 'sum') - read(before, 'sum')) * 1000;
      return `${kind} ${n} (${ms.toFixed(0)} ms; ${((n / Math.max(1, ops)) * 1000).toFixed(1)} per 1,000 pays)`;
    })
    .join(', ');
}
