import type { Registry } from 'prom-client';

/**
 * Counters and histograms for the request path. prom-client hashes the label
 * set on every observation, even through a child from labels(); these keep
 * one small state object per label set and bind it once, so an observation
 * is a bucket search and a few additions. They expose themselves to a
 * prom-client Registry (same text format, same `get()` shape), so scraping
 * and the README table work as for any other metric.
 */

type Labels = Readonly<Record<string, string>>;

interface MetricValue {
  readonly labels: Labels;
  readonly value: number;
  readonly metricName?: string;
}

interface Exposed {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly labelNames: readonly string[];
  get(): Promise<{ name: string; help: string; type: string; values: MetricValue[]; aggregator: 'sum' }>;
  reset(): void;
}

interface Definition<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  readonly registers: readonly Registry[];
}

function labelsOf(names: readonly string[], values: readonly string[]): Labels {
  const out: Record<string, string> = {};
  names.forEach((n, i) => {
    out[n] = values[i] as string;
  });
  return Object.freeze(out);
}

export interface BoundCounter {
  inc(by?: number): void;
}

export class FastCounter<L extends string> implements Exposed {
  readonly name: string;
  readonly help: string;
  readonly type = 'counter' as const;
  readonly labelNames: readonly L[];
  readonly #series = new Map<string, { labels: Labels; value: number }>();

  constructor(def: Definition<L>) {
    this.name = def.name;
    this.help = def.help;
    this.labelNames = def.labelNames;
    for (const r of def.registers) r.registerMetric(this as never);
  }

  /** The series for these label values, created on first use; keep it and call inc(). */
  bind(...values: string[]): BoundCounter {
    const key = values.join('\u0000');
    let s = this.#series.get(key);
    if (s === undefined) {
      s = { labels: labelsOf(this.labelNames, values), value: 0 };
      this.#series.set(key, s);
    }
    const series = s;
    return {
      inc(by = 1) {
        series.value += by;
      },
    };
  }

  async get() {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: 'sum' as const,
      values: [...this.#series.values()].map((s) => ({ labels: s.labels, value: s.value })),
    };
  }

  reset(): void {
    for (const s of this.#series.values()) s.value = 0;
  }
}

export interface BoundHistogram {
  observe(value: number): void;
}

interface HistogramSeries {
  readonly labels: Labels;
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

export class FastHistogram<L extends string> implements Exposed {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram' as const;
  readonly labelNames: readonly L[];
  readonly #buckets: readonly number[];
  readonly #series = new Map<string, HistogramSeries>();

  constructor(def: Definition<L> & { readonly buckets: readonly number[] }) {
    this.name = def.name;
    this.help = def.help;
    this.labelNames = def.labelNames;
    this.#buckets = [...def.buckets].sort((a, b) => a - b);
    for (const r of def.registers) r.registerMetric(this as never);
  }

  bind(...values: string[]): BoundHistogram {
    const key = values.join('\u0000');
    let s = this.#series.get(key);
    if (s === undefined) {
      s = {
        labels: labelsOf(this.labelNames, values),
        counts: new Float64Array(this.#buckets.length),
        sum: 0,
        count: 0,
      };
      this.#series.set(key, s);
    }
    const series = s;
    const buckets = this.#buckets;
    return {
      observe(value: number) {
        // Per-bucket (not cumulative) counts; get() accumulates at scrape time.
        for (let i = 0; i < buckets.length; i++) {
          if (value <= (buckets[i] as number)) {
            series.counts[i] = (series.counts[i] ?? 0) + 1;
            break;
          }
        }
        series.sum += value;
        series.count++;
      },
    };
  }

  async get() {
    const values: MetricValue[] = [];
    for (const s of this.#series.values()) {
      let cumulative = 0;
      this.#buckets.forEach((le, i) => {
        cumulative += s.counts[i] as number;
        values.push({ labels: { ...s.labels, le: String(le) }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum' as const, values };
  }

  reset(): void {
    for (const s of this.#series.values()) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}
