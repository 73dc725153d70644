/**
 * Side-by-side load runs of a few variants of one server (`tpx serve` with one worker or two; with
 * observability off or on): for each round, each load, every variant in turn, the order rotating from
 * round to round, so that a noisy stretch of the machine hurts each variant alike. Each run records the
 * load generator's result and the CPU time the variant's processes used per request it answered.
 *
 * A load is a closed loop of `connections` (`load.ts`), or, with `ratePerSecond`, requests started at
 * that fixed rate with at most `connections` in flight (`fixed-rate-load.ts`), the same for every
 * variant.
 *
 * @module
 */
import { runFixedRateLoad, type RateSchedule } from './fixed-rate-load.js';
import { runLoad, type LoadResult, type LoadTarget } from './load.js';
import { median } from './stats.js';

/** One way of running the server under test. */
export interface Variant {
  name: string;
  /** What to load the variant with under `load` (streaming or not, and whatever else the load names). */
  target: (stream: boolean, load: VariantLoad) => LoadTarget;
  /** CPU time the variant's processes have used so far, in ms. */
  cpuMs: () => number;
}

export interface VariantLoad {
  name: string;
  /** Closed loop: the connections, each sending again when its answer ends. Fixed rate: the most in flight. */
  connections: number;
  stream: boolean;
  /** When set, an open loop: requests started at this many a second, whatever the variant's speed. */
  ratePerSecond?: number;
}

export interface VariantRunOptions {
  rounds: number;
  warmupMs: number;
  durationMs: number;
}

/** One load run of one variant. */
export interface VariantMeasurement extends LoadResult {
  /** CPU time of the variant's processes over the run (warm-up included), per request answered, in µs. */
  cpuUsPerRequest: number;
  /** At a fixed rate: how the schedule went (asked and achieved rate, missed requests). */
  schedule?: RateSchedule;
}

/** Measurements by load, then variant, one per round. */
export type VariantMeasurements = Map<string, Map<string, VariantMeasurement[]>>;

/** Runs every load for every variant, `rounds` times; fails when a run completes no request. */
export async function runVariants(
  variants: readonly Variant[],
  loads: readonly VariantLoad[],
  options: VariantRunOptions,
): Promise<VariantMeasurements> {
  const measurements: VariantMeasurements = new Map(
    loads.map((load) => [load.name, new Map(variants.map((variant) => [variant.name, []]))]),
  );
  for (let round = 0; round < options.rounds; round++) {
    for (const load of loads) {
      const order = variants.map((_, index) => variants[(index + round) % variants.length]!);
      for (const variant of order) {
        const cpuBefore = variant.cpuMs();
        const target = variant.target(load.stream, load);
        const timing = { warmupMs: options.warmupMs, durationMs: options.durationMs };
        const result: LoadResult & { schedule?: RateSchedule } =
          load.ratePerSecond === undefined
            ? await runLoad(target, { connections: load.connections, ...timing })
            : await runFixedRateLoad(target, {
                ratePerSecond: load.ratePerSecond,
                maxInFlight: load.connections,
                ...timing,
              });
        const cpuUsPerRequest = ((variant.cpuMs() - cpuBefore) * 1000) / result.completedTotal;
        assertClean(result, `${variant.name} ${load.name}`);
        measurements
          .get(load.name)!
          .get(variant.name)!
          .push({ ...result, cpuUsPerRequest });
      }
    }
  }
  return measurements;
}

/** Fails a side-by-side run that completed no request or saw any fail: its CPU per request means nothing. */
export function assertClean(result: LoadResult, what: string): void {
  if (result.requests === 0 || result.errors > 0) {
    throw new Error(
      `${what}: ${result.requests} requests, ${result.errors} errors (${result.firstError ?? 'none'})`,
    );
  }
}

/** The per-round ratios `metric(numerator) / metric(denominator)` under one load. */
export function perRoundRatios(
  measurements: VariantMeasurements,
  load: string,
  numerator: string,
  denominator: string,
  metric: (measurement: VariantMeasurement) => number,
): number[] {
  const byVariant = measurements.get(load)!;
  const top = byVariant.get(numerator)!;
  const bottom = byVariant.get(denominator)!;
  return top.map((measurement, round) => metric(measurement) / metric(bottom[round]!));
}

/** `metric` of `minuend` less that of `subtrahend`, round by round, under one load (a cost added, say). */
export function perRoundDifferences(
  measurements: VariantMeasurements,
  load: string,
  minuend: string,
  subtrahend: string,
  metric: (measurement: VariantMeasurement) => number,
): number[] {
  const byVariant = measurements.get(load)!;
  const bottom = byVariant.get(subtrahend)!;
  return byVariant.get(minuend)!.map((measurement, round) => metric(measurement) - metric(bottom[round]!));
}

/** The median over rounds of `metric` for one variant under one load. */
export function medianOf(
  measurements: VariantMeasurements,
  load: string,
  variant: string,
  metric: (measurement: VariantMeasurement) => number,
): number {
  return median(measurements.get(load)!.get(variant)!.map(metric));
}
