/**
 * The event loop's delay as Prometheus gauges (`nodejs_eventloop_lag_{min,max,mean,stddev,p50,p90,p99}_seconds`,
 * the names prom-client's default metrics use), measured without the sampling interval in them.
 *
 * Node's `monitorEventLoopDelay` samples with a timer that fires every `resolution` milliseconds and
 * records the time between two firings: the interval itself plus however late the loop ran the timer.
 * prom-client's default metrics report those values as they are, so an idle process shows the interval
 * as its lag (10 ms at prom-client's default resolution; at the 100 ms `tpx serve` samples with, 0.1 s,
 * enough to trip an alert on a loop that is not delayed at all). Here the interval is taken off every
 * value but the standard deviation, which it does not change: what is left is the delay.
 *
 * Values cover the time since the previous scrape (the histogram starts again at each one, as
 * prom-client's does). Starting again, Node's histogram also forgets when its timer last fired, so the
 * first interval after a scrape is not measured: at a scrape every 15 s, one interval in 150. A scrape
 * that comes before any sample since the previous one keeps the previous values.
 *
 * @module
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Gauge, type Registry } from 'prom-client';

/** The names of the gauges, as prom-client's default metrics have them. */
export const EVENT_LOOP_DELAY_METRICS = [
  'nodejs_eventloop_lag_min_seconds',
  'nodejs_eventloop_lag_max_seconds',
  'nodejs_eventloop_lag_mean_seconds',
  'nodejs_eventloop_lag_stddev_seconds',
  'nodejs_eventloop_lag_p50_seconds',
  'nodejs_eventloop_lag_p90_seconds',
  'nodejs_eventloop_lag_p99_seconds',
] as const;

const NS_PER_SECOND = 1e9;

/**
 * Samples the event loop's delay every `resolutionMs` and registers its gauges in `registry`. The
 * sampling timer does not keep the process alive.
 */
export function registerEventLoopDelay(registry: Registry, resolutionMs: number): void {
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  histogram.enable();
  const intervalNs = resolutionMs * 1e6;
  /** A value of the histogram (nanoseconds, interval included) as the delay in seconds. */
  const delay = (ns: number) => Math.max(0, ns - intervalNs) / NS_PER_SECOND;
  const registers = [registry];
  const [minName, maxName, meanName, stddevName, p50Name, p90Name, p99Name] = EVENT_LOOP_DELAY_METRICS;
  // The first gauge's collect reads the histogram for all of them: the registry collects its metrics in
  // the order they were registered.
  new Gauge({
    name: minName,
    help: 'The shortest event loop delay sampled since the previous scrape, in seconds.',
    registers,
    aggregator: 'min',
    collect() {
      if (histogram.count === 0) return;
      this.set(delay(histogram.min));
      max.set(delay(histogram.max));
      mean.set(delay(histogram.mean));
      stddev.set(histogram.stddev / NS_PER_SECOND);
      p50.set(delay(histogram.percentile(50)));
      p90.set(delay(histogram.percentile(90)));
      p99.set(delay(histogram.percentile(99)));
      histogram.reset();
    },
  });
  const max = new Gauge({
    name: maxName,
    help: 'The longest event loop delay sampled since the previous scrape, in seconds.',
    registers,
    aggregator: 'max',
  });
  const mean = new Gauge({
    name: meanName,
    help: 'The mean event loop delay sampled since the previous scrape, in seconds.',
    registers,
    aggregator: 'average',
  });
  const stddev = new Gauge({
    name: stddevName,
    help: 'The standard deviation of the event loop delays sampled since the previous scrape, in seconds.',
    registers,
    aggregator: 'average',
  });
  const percentile = (name: string, rank: number) =>
    new Gauge({
      name,
      help: `The ${rank}th percentile of the event loop delays sampled since the previous scrape, in seconds.`,
      registers,
      aggregator: 'average',
    });
  const p50 = percentile(p50Name, 50);
  const p90 = percentile(p90Name, 90);
  const p99 = percentile(p99Name, 99);
}
