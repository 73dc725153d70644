/**
 * Prometheus counters and histograms whose series the proxy keeps itself, in a prom-client registry.
 *
 * prom-client's own `inc(labels, value)` and `observe(labels, value)` turn the labels into a string key
 * on every call (and a labelled child made by `labels(…)` does the same on every call, it only saves
 * reading the arguments), and our code made a label object per call for them: together a few
 * microseconds per exchange, most of what the metrics cost. Here a series is found through nested
 * maps, one level per label, keyed by the label values themselves; a known series is found, counted
 * and observed without allocating anything. The registry reads the series only when it is scraped.
 *
 * The scrape is what prom-client's own `Counter` and `Histogram` would give for the same
 * calls, line for line: the same names, help, types, label order, series in the order they were
 * first seen, histogram buckets cumulative with `+Inf`, `_sum` and `_count`; and the same JSON for the
 * registry's `getMetricsAsJSON` (which the primary of `tpx serve --workers` aggregates).
 *
 * Series are never dropped: their number is bounded by the label values callers pass, so a label
 * a client controls must be bounded before it gets here (see `metrics.ts`).
 *
 * @module
 */
import type { Metric, Registry } from 'prom-client';

/**
 * A label value as callers have it (a status stays a number until a series is made). A label takes
 * values of one type: `200` and `'200'` are different keys, so they would make two series with the same
 * labels.
 */
export type LabelValue = string | number;

/** One level of a series table: the next level, or at the last label, the series. */
type Level<Series> = Map<LabelValue, Level<Series> | Series>;

/**
 * The series of one metric, found by their label values through one map per label. Up to five labels:
 * the values are passed as separate arguments, so a lookup builds no array or key. The map of the last
 * label reached by the latest lookup is remembered with the values that led to it: consecutive
 * exchanges mostly share them (the route, the status, the provider, the model), and then a lookup is a
 * few comparisons and one map read.
 */
class SeriesTable<Series> {
  readonly #root: Level<Series> = new Map();
  /** Every series, in the order first seen (the order of the scrape). */
  readonly all: Series[] = [];
  /** Index of the last label. */
  readonly #last: number;
  /** The map of the last label that the latest lookup reached, and the values before it that led there. */
  #lastLevel: Level<Series> | undefined;
  #first: LabelValue | undefined;
  #second: LabelValue | undefined;
  #third: LabelValue | undefined;
  #fourth: LabelValue | undefined;

  constructor(
    readonly labelNames: readonly string[],
    private readonly make: (labels: Readonly<Record<string, string>>) => Series,
  ) {
    if (labelNames.length < 1 || labelNames.length > 5) {
      throw new RangeError(`a series table has one to five labels, not ${labelNames.length}`);
    }
    this.#last = labelNames.length - 1;
  }

  /** Whether the values before the last label are the latest lookup's (so its last map is theirs). */
  #isLastPrefix(first: LabelValue, second?: LabelValue, third?: LabelValue, fourth?: LabelValue): boolean {
    switch (this.#last) {
      case 0:
        return true;
      case 1:
        return first === this.#first;
      case 2:
        return first === this.#first && second === this.#second;
      case 3:
        return first === this.#first && second === this.#second && third === this.#third;
      default:
        return (
          first === this.#first && second === this.#second && third === this.#third && fourth === this.#fourth
        );
    }
  }

  find(first: LabelValue, second?: LabelValue, third?: LabelValue, fourth?: LabelValue, fifth?: LabelValue) {
    const last = this.#last;
    let level = this.#lastLevel;
    if (level === undefined || !this.#isLastPrefix(first, second, third, fourth)) {
      level = this.#root;
      for (let index = 0; index < last; index++) {
        const key = pick(index, first, second, third, fourth, fifth);
        let next = level.get(key) as Level<Series> | undefined;
        if (next === undefined) {
          next = new Map();
          level.set(key, next);
        }
        level = next;
      }
      this.#lastLevel = level;
      this.#first = first;
      this.#second = second;
      this.#third = third;
      this.#fourth = fourth;
    }
    const key = pick(last, first, second, third, fourth, fifth);
    const known = level.get(key) as Series | undefined;
    if (known !== undefined) return known;
    const labels: Record<string, string> = {};
    for (let index = 0; index <= last; index++) {
      labels[this.labelNames[index]!] = String(pick(index, first, second, third, fourth, fifth));
    }
    const made = this.make(labels);
    level.set(key, made);
    this.all.push(made);
    return made;
  }

  clear(): void {
    this.#root.clear();
    this.all.length = 0;
    this.#lastLevel = undefined;
  }
}

/** The `index`th of the label values (one not passed is the empty string). */
function pick(
  index: number,
  first: LabelValue,
  second: LabelValue | undefined,
  third: LabelValue | undefined,
  fourth: LabelValue | undefined,
  fifth: LabelValue | undefined,
): LabelValue {
  switch (index) {
    case 0:
      return first;
    case 1:
      return second ?? '';
    case 2:
      return third ?? '';
    case 3:
      return fourth ?? '';
    default:
      return fifth ?? '';
  }
}

/** What a metric says of itself at a scrape. */
interface MetricDefinition {
  name: string;
  help: string;
  labelNames: readonly string[];
  /** Registered here, in the order of creation (the order of the scrape). */
  registry: Registry;
}

/** One series of a {@link SeriesCounter}. */
export class CounterSeries {
  value = 0;
  constructor(readonly labels: Readonly<Record<string, string>>) {}

  /** Adds `amount` (a positive finite number: the caller checks, as a counter only grows). */
  add(amount: number): void {
    this.value += amount;
  }
}

/** One series of a {@link SeriesHistogram}: counts per bucket (not cumulative), sum and count. */
export class HistogramSeries {
  /** Observations per bucket: `counts[i]` ≤ `upperBounds[i]` and above the bound before it. */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly upperBounds: readonly number[],
  ) {
    this.counts = upperBounds.map(() => 0);
  }

  /** Counts `value` in the first bucket whose upper bound is at least `value`; a non-finite one is skipped. */
  observe(value: number): void {
    if (!Number.isFinite(value)) return;
    const bounds = this.upperBounds;
    for (let index = 0; index < bounds.length; index++) {
      if (value <= bounds[index]!) {
        this.counts[index]! += 1;
        break;
      }
    }
    this.sum += value;
    this.count += 1;
  }
}

/**
 * Registers `metric` in `registry`. The registry accepts anything that names itself and answers
 * `get()` (prom-client registers its own aggregated metrics that way); its type lists only its classes.
 */
function register(registry: Registry, metric: object): void {
  registry.registerMetric(metric as Metric);
}

/** A counter whose series are kept here; see the module comment. */
export class SeriesCounter {
  readonly name: string;
  readonly help: string;
  readonly type = 'counter';
  readonly aggregator = 'sum';
  readonly #table: SeriesTable<CounterSeries>;

  constructor(definition: MetricDefinition) {
    this.name = definition.name;
    this.help = definition.help;
    this.#table = new SeriesTable(definition.labelNames, (labels) => new CounterSeries(labels));
    register(definition.registry, this);
  }

  /** The series of these label values, in the order of the label names; made at first use. */
  series(
    first: LabelValue,
    second?: LabelValue,
    third?: LabelValue,
    fourth?: LabelValue,
    fifth?: LabelValue,
  ): CounterSeries {
    return this.#table.find(first, second, third, fourth, fifth);
  }

  /** As prom-client's `Counter.get()`. */
  async get() {
    return {
      help: this.help,
      name: this.name,
      type: this.type,
      values: this.#table.all.map((series) => ({ value: series.value, labels: series.labels })),
      aggregator: this.aggregator,
    };
  }

  /** Forgets every series, as prom-client's `reset` (through `registry.resetMetrics()`). */
  reset(): void {
    this.#table.clear();
  }
}

/** A histogram whose series are kept here; see the module comment. */
export class SeriesHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly upperBounds: readonly number[];
  readonly #table: SeriesTable<HistogramSeries>;

  constructor(definition: MetricDefinition & { buckets: readonly number[] }) {
    this.name = definition.name;
    this.help = definition.help;
    this.upperBounds = Object.freeze([...definition.buckets]);
    this.#table = new SeriesTable(
      definition.labelNames,
      (labels) => new HistogramSeries(labels, this.upperBounds),
    );
    register(definition.registry, this);
  }

  /** The series of these label values, in the order of the label names; made at first use. */
  series(
    first: LabelValue,
    second?: LabelValue,
    third?: LabelValue,
    fourth?: LabelValue,
    fifth?: LabelValue,
  ): HistogramSeries {
    return this.#table.find(first, second, third, fourth, fifth);
  }

  /**
   * As prom-client's `Histogram.get()`: per series, a cumulative `_bucket` sample per upper bound
   * and `+Inf` (labels `le` first, then the series'), then `_sum` and `_count`.
   */
  async get() {
    const bucketName = `${this.name}_bucket`;
    const values: {
      value: number;
      metricName: string;
      exemplar: null | undefined;
      labels: Record<string, string | number>;
    }[] = [];
    for (const series of this.#table.all) {
      let cumulative = 0;
      for (let index = 0; index < this.upperBounds.length; index++) {
        cumulative += series.counts[index]!;
        values.push({
          value: cumulative,
          metricName: bucketName,
          exemplar: null,
          labels: { le: this.upperBounds[index]!, ...series.labels },
        });
      }
      values.push(
        {
          value: series.count,
          metricName: bucketName,
          exemplar: null,
          labels: { le: '+Inf', ...series.labels },
        },
        {
          value: series.sum,
          metricName: `${this.name}_sum`,
          exemplar: undefined,
          labels: { ...series.labels },
        },
        {
          value: series.count,
          metricName: `${this.name}_count`,
          exemplar: undefined,
          labels: { ...series.labels },
        },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** Forgets every series, as prom-client's `reset` (through `registry.resetMetrics()`). */
  reset(): void {
    this.#table.clear();
  }
}
