/**
 * Side-by-side runs in which every variant is loaded at the same time: for each round a fresh fleet of
 * processes, one per variant, is started, warmed up, and sent the same fixed-rate load all at once; then
 * it is stopped. What a round measures for one variant is held against what it measures for another
 * in the same round.
 *
 * Why not one variant after the other (`variants.ts`)? On a shared 2-core machine the CPU time a
 * request takes moves by ±20% from one second to the next (other processes, the host), and a variant
 * run a second after another meets a different machine. Loaded together, the variants meet the same
 * one: the per-round ratios then spread by a few percent instead of tens.
 *
 * Why a fresh fleet each round? A long-lived process keeps whatever it drew at start-up (where its
 * heap and code landed, what the compiler made of its first requests), and two identical processes
 * may differ by 5–10% in CPU per request for their whole lives. Starting every variant afresh each
 * round, in rotating order, turns that draw into noise that the median over rounds averages out,
 * instead of a bias that one variant carries throughout. Two processes of the same variant in one fleet
 * measure what is left: the ratio between them is the run's own resolution.
 *
 * @module
 */
import { runFixedRateLoad } from './fixed-rate-load.js';
import { runLoad, type LoadTarget } from './load.js';
import { mainThreadCpuMs, threadCpuMs } from './process-cpu.js';
import { assertClean, type VariantMeasurement, type VariantMeasurements } from './variants.js';
import type { ChildServer } from './children.js';

/** One load of a fleet round: the same requests a second to every process. */
export interface FleetLoad {
  name: string;
  stream: boolean;
  /** Requests started a second, to each process of the fleet. */
  ratePerSecond: number;
}

export interface FleetRunOptions {
  rounds: number;
  /** Before each load's measured run: a closed loop of a few connections to every process at once. */
  warmupMs: number;
  /**
   * The warm-up goes on past `warmupMs` until every process has answered this many requests of the load
   * (but never past a minute more): CPU per request falls by half over a fresh process's first few
   * thousand exchanges while the compiler optimises the code they run, and what a proxy in service
   * costs is what it costs after that. @default 0
   */
  warmupRequests?: number;
  /** The measured fixed-rate run of each load. */
  durationMs: number;
  /**
   * The measured run lasts at least as long as this many requests take at the load's rate: a
   * collection of the old generation, a span batch or a metrics export weighs a few percent of 150
   * requests' CPU, and a 3-second window at a low rate holds one of them or none depending on the
   * round. Over 1,000 requests each load's window holds a comparable share of them. @default 0
   */
  minMeasuredRequests?: number;
  /** Requests in flight at most, per process; one due beyond that is missed. */
  maxInFlight: number;
}

/** A measurement of one process under one load in one round. */
export interface FleetMeasurement extends VariantMeasurement {
  /** CPU time of the process's main thread (JavaScript; the rest is the collector's and compiler's helpers), per request, in µs. */
  mainThreadCpuUsPerRequest: number;
}

/** Starts one process per variant, in the order given (the order rotates from round to round). */
export type StartFleet = (order: readonly string[], round: number) => Promise<Map<string, ChildServer>>;

/** How long the measured run of `load` lasts (see {@link FleetRunOptions.minMeasuredRequests}). */
export function measuredMs(options: FleetRunOptions, load: FleetLoad): number {
  const forRequests = ((options.minMeasuredRequests ?? 0) / load.ratePerSecond) * 1000;
  return Math.max(options.durationMs, Math.ceil(forRequests));
}

/** Connections of the warm-up's closed loop, per process. */
const WARMUP_CONNECTIONS = 4;

/**
 * Runs `rounds` fleets of `variants`, each under every load in turn; fails when a run completes no
 * request or any request fails.
 */
export async function runFleetRounds(
  variants: readonly string[],
  startFleet: StartFleet,
  loads: readonly FleetLoad[],
  target: (server: ChildServer, load: FleetLoad) => LoadTarget,
  options: FleetRunOptions,
): Promise<Map<string, Map<string, FleetMeasurement[]>>> {
  const measurements = new Map(
    loads.map((load) => [load.name, new Map(variants.map((variant) => [variant, [] as FleetMeasurement[]]))]),
  );
  for (let round = 0; round < options.rounds; round++) {
    const order = variants.map((_, index) => variants[(index + round) % variants.length]!);
    const fleet = await startFleet(order, round);
    try {
      for (const load of loads) {
        const members = order.map((variant) => ({ variant, server: fleet.get(variant)! }));
        await Promise.all(
          members.map(({ server }) =>
            runLoad(target(server, load), {
              connections: WARMUP_CONNECTIONS,
              warmupMs: 0,
              durationMs: options.warmupMs,
              minRequests: options.warmupRequests ?? 0,
            }),
          ),
        );
        const before = members.map(({ server }) => ({
          all: threadCpuMs(server.pid),
          main: mainThreadCpuMs(server.pid),
        }));
        const results = await Promise.all(
          members.map(({ server }) =>
            runFixedRateLoad(target(server, load), {
              ratePerSecond: load.ratePerSecond,
              maxInFlight: options.maxInFlight,
              warmupMs: 0,
              durationMs: measuredMs(options, load),
            }),
          ),
        );
        for (const [index, { variant, server }] of members.entries()) {
          const result = results[index]!;
          assertClean(result, `${variant} ${load.name}`);
          const perRequest = (ms: number) => (ms * 1000) / result.completedTotal;
          measurements
            .get(load.name)!
            .get(variant)!
            .push({
              ...result,
              cpuUsPerRequest: perRequest(threadCpuMs(server.pid) - before[index]!.all),
              mainThreadCpuUsPerRequest: perRequest(mainThreadCpuMs(server.pid) - before[index]!.main),
            });
        }
      }
    } finally {
      await Promise.all([...fleet.values()].map((server) => server.stop()));
    }
  }
  return measurements satisfies VariantMeasurements;
}
