/**
 * Counters and histograms whose series the proxy keeps itself, held against prom-client's own
 * `Counter` and `Histogram` fed the same calls: the scrape text, the registry's JSON and the
 * aggregation across workers must be the same, line for line.
 */
import fc from 'fast-check';
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { SeriesCounter, SeriesHistogram } from '../../src/server/series-metrics.js';

const BUCKETS = [0.05, 0.1, 0.25, 1, 10];

/** A counter and a histogram of each kind, in two registries, and one call that moves both alike. */
function pair() {
  const reference = new Registry();
  const ours = new Registry();
  const counterDefinition = {
    name: 'test_requests_total',
    help: 'Requests, by route, status and model.',
    labelNames: ['route', 'status', 'model'],
  };
  const histogramDefinition = {
    name: 'test_duration_seconds',
    help: 'Durations, by route and stream.',
    labelNames: ['route', 'stream'],
    buckets: BUCKETS,
  };
  const referenceCounter = new Counter({ ...counterDefinition, registers: [reference] });
  const referenceHistogram = new Histogram({ ...histogramDefinition, registers: [reference] });
  const counter = new SeriesCounter({ ...counterDefinition, registry: ours });
  const histogram = new SeriesHistogram({ ...histogramDefinition, registry: ours });
  return {
    reference,
    ours,
    count(route: string, status: number, model: string, amount: number) {
      referenceCounter.inc({ route, status: String(status), model }, amount);
      counter.series(route, status, model).add(amount);
    },
    observe(route: string, stream: string, seconds: number) {
      referenceHistogram.observe({ route, stream }, seconds);
      histogram.series(route, stream).observe(seconds);
    },
    counter,
    histogram,
  };
}

/** Moves both sides with interleaved series, values on and between bounds, and above the last. */
function feed(metrics: ReturnType<typeof pair>, offset = 0): void {
  metrics.count('/v1/messages', 200, 'claude-a', 1);
  metrics.count('/v1/models', 200, 'none', 1);
  metrics.count('/v1/messages', 529, 'claude-a', 1);
  metrics.count('/v1/messages', 200, 'claude-a', 2.5 + offset);
  metrics.count('/v1/messages', 200, 'claude-b "quoted"\n', 7);
  for (const seconds of [0.05, 0.0499, 0.1, 0.3, 1, 10, 10.0001, 600, 0.1 + offset, 1 / 3]) {
    metrics.observe('/v1/messages', seconds > 1 ? 'true' : 'false', seconds);
    metrics.observe('/healthz', 'false', seconds / 7);
  }
}

describe('counters and histograms whose series the proxy keeps', () => {
  it('scrape to the same text as prom-client’s own counter and histogram fed the same calls', async () => {
    const metrics = pair();
    feed(metrics);
    const text = await metrics.ours.metrics();
    expect(text).toBe(await metrics.reference.metrics());
    // Not vacuous: both sides carry the series, cumulative buckets and sums.
    expect(text).toContain('test_requests_total{route="/v1/messages",status="200",model="claude-a"} 3.5');
    expect(text).toContain('test_duration_seconds_bucket{le="0.05",route="/v1/messages",stream="false"} 2');
    expect(text).toContain('test_duration_seconds_bucket{le="+Inf",route="/v1/messages",stream="true"} 3');
  });

  it('give the registry the same JSON as prom-client’s, and the same sums across workers', async () => {
    const metrics = pair();
    feed(metrics);
    expect(await metrics.ours.getMetricsAsJSON()).toStrictEqual(await metrics.reference.getMetricsAsJSON());

    const otherWorker = pair();
    feed(otherWorker, 0.25);
    const aggregatedOurs = AggregatorRegistry.aggregate([
      await metrics.ours.getMetricsAsJSON(),
      await otherWorker.ours.getMetricsAsJSON(),
    ]);
    const aggregatedReference = AggregatorRegistry.aggregate([
      await metrics.reference.getMetricsAsJSON(),
      await otherWorker.reference.getMetricsAsJSON(),
    ]);
    const text = await aggregatedOurs.metrics();
    expect(text).toBe(await aggregatedReference.metrics());
    expect(text).toContain('test_requests_total{route="/v1/messages",status="200",model="claude-a"} 7.25');
  });

  it('keep scraping the same as prom-client’s after more calls on known and new series', async () => {
    const metrics = pair();
    feed(metrics);
    await metrics.ours.metrics();
    await metrics.reference.metrics();
    metrics.count('/v1/messages', 400, 'claude-c', 1);
    metrics.count('/v1/models', 200, 'none', 1);
    metrics.observe('/other', 'false', 0.25);
    metrics.observe('/v1/messages', 'false', 0.25);
    expect(await metrics.ours.metrics()).toBe(await metrics.reference.metrics());
  });

  it('count a value equal to a bucket’s upper bound in that bucket', async () => {
    const registry = new Registry();
    const histogram = new SeriesHistogram({
      name: 'bounds_seconds',
      help: 'Values on bounds.',
      labelNames: ['kind'],
      buckets: BUCKETS,
      registry,
    });
    const series = histogram.series('on');
    for (const value of BUCKETS) series.observe(value);
    expect(series.counts).toStrictEqual([1, 1, 1, 1, 1]);
    series.observe(10.5);
    expect(series.counts).toStrictEqual([1, 1, 1, 1, 1]);
    expect(series.count).toBe(6);
    expect(series.sum).toBeCloseTo(0.05 + 0.1 + 0.25 + 1 + 10 + 10.5, 12);
  });

  it('skip a value that is not a finite number instead of throwing into the exchange', () => {
    const histogram = new SeriesHistogram({
      name: 'finite_seconds',
      help: 'Only finite values.',
      labelNames: ['kind'],
      buckets: BUCKETS,
      registry: new Registry(),
    });
    const series = histogram.series('any');
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])
      series.observe(value);
    expect({ count: series.count, sum: series.sum, counts: series.counts }).toStrictEqual({
      count: 0,
      sum: 0,
      counts: [0, 0, 0, 0, 0],
    });
  });

  it('find a known series again by its label values, and a new one for other values', () => {
    const counter = new SeriesCounter({
      name: 'known_total',
      help: 'Known series.',
      labelNames: ['provider', 'status'],
      registry: new Registry(),
    });
    const first = counter.series('tpx', 200);
    expect(counter.series('tpx', 200)).toBe(first);
    expect(counter.series('tpx', 500)).not.toBe(first);
    expect(counter.series('anthropic', 200)).not.toBe(first);
    expect(first.labels).toStrictEqual({ provider: 'tpx', status: '200' });
  });

  it('count each call in its own series whatever the order of label values, as prom-client does', async () => {
    // Consecutive lookups that share the values before the last label reuse the latest lookup's
    // path: any interleaving of one to five labels must still land every call in its own series.
    const value = fc.constantFrom('a', 'b', 'ab', '');
    const call = fc.tuple(value, value, value, value, fc.constantFrom('a', 'b', 200, 529));
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }),
        fc.array(call, { maxLength: 40 }),
        async (arity, calls) => {
          const labelNames = ['l1', 'l2', 'l3', 'l4', 'l5'].slice(0, arity);
          const reference = new Registry();
          const ours = new Registry();
          const definition = { name: 'interleaved_total', help: 'Interleaved series.', labelNames };
          const referenceCounter = new Counter({ ...definition, registers: [reference] });
          const counter = new SeriesCounter({ ...definition, registry: ours });
          for (const values of calls) {
            const used = values.slice(0, arity);
            // The last label takes numbers too (a status); the others are strings.
            const labels = Object.fromEntries(labelNames.map((name, index) => [name, String(used[index])]));
            referenceCounter.inc(labels, 1);
            counter.series(used[0]!, used[1], used[2], used[3], used[4]).add(1);
          }
          expect(await ours.metrics()).toBe(await reference.metrics());
        },
      ),
      { numRuns: 200 },
    );
  });

  it('forget their series when the registry resets its metrics, and count afresh after', async () => {
    const metrics = pair();
    feed(metrics);
    metrics.ours.resetMetrics();
    metrics.reference.resetMetrics();
    expect(await metrics.ours.metrics()).toBe(await metrics.reference.metrics());
    expect(await metrics.ours.metrics()).not.toContain('route=');
    metrics.count('/v1/messages', 200, 'claude-a', 1);
    metrics.observe('/v1/messages', 'false', 0.2);
    const text = await metrics.ours.metrics();
    expect(text).toBe(await metrics.reference.metrics());
    expect(text).toContain('test_requests_total{route="/v1/messages",status="200",model="claude-a"} 1');
  });

  it('refuse a metric with no labels or more than five', () => {
    const registry = new Registry();
    for (const labelNames of [[], ['a', 'b', 'c', 'd', 'e', 'f']]) {
      expect(
        () =>
          new SeriesCounter({ name: `labels_${labelNames.length}_total`, help: 'x', labelNames, registry }),
      ).toThrow(RangeError);
    }
  });
});
