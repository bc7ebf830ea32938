/**
 * Typed makers of prom-client metrics bound to one registry: a process lists each metric as its name,
 * help text, label names (and buckets) and gets it registered on its own registry — never on prom-client's
 * global default one, which would mix the metrics of several apps built in one process (tests).
 *
 * Defends: a metric registered on the wrong registry; with `reuseExisting`, a second instance of the same
 * component on a shared registry gets the metric already there instead of an "already registered" error.
 * Without it a second metric of the same name throws, as prom-client does, so a name clash is found at start.
 * Does not: choose names, units or buckets — each process keeps its own (`treasury_*`, `_total`, `_seconds`).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface MetricSpec<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
}

export interface GaugeSpec<L extends string> extends MetricSpec<L> {
  /** Sets the gauge's value when the registry is read (a count kept elsewhere, read at scrape time). */
  collect?: (this: Gauge<L>) => void;
}

export interface HistogramSpec<L extends string> extends MetricSpec<L> {
  buckets: number[];
}

export interface MetricMakers {
  counter<L extends string = never>(spec: MetricSpec<L>): Counter<L>;
  gauge<L extends string = never>(spec: GaugeSpec<L>): Gauge<L>;
  histogram<L extends string = never>(spec: HistogramSpec<L>): Histogram<L>;
}

export function metricMakers(registry: Registry, options: { reuseExisting?: boolean } = {}): MetricMakers {
  const make = <M>(name: string, build: () => M): M => {
    const existing = options.reuseExisting ? (registry.getSingleMetric(name) as M | undefined) : undefined;
    return existing ?? build();
  };
  return {
    counter: (spec) => make(spec.name, () => new Counter({ ...spec, registers: [registry] })),
    gauge: (spec) => make(spec.name, () => new Gauge({ ...spec, registers: [registry] })),
    histogram: (spec) => make(spec.name, () => new Histogram({ ...spec, registers: [registry] })),
  };
}
