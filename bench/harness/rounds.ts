/**
 * Side-by-side timing of in-process tasks with tinybench, in interleaved rounds.
 *
 * On a noisy machine a slow minute hurts whichever task happens to run in it. So every task of a
 * comparison runs once per round, in an order that rotates from round to round, and a comparison is
 * judged by the ratio of two tasks measured in the same round: the median of those per-round ratios is
 * what the report quotes, next to the median of the per-round medians of each task.
 *
 * @module
 */
import { Bench } from 'tinybench';
import { median } from './stats.js';

/** One timed function. It runs synchronously; its result is kept alive so it cannot be optimised away. */
export interface TimedTask {
  name: string;
  fn: () => unknown;
}

/** How long and how often to time. */
export interface RoundOptions {
  /** Rounds; each runs every task once. */
  rounds: number;
  /** Time per task per round, in ms (tinybench's `time`). */
  timeMs: number;
  /** At least this many calls per task per round, even if `timeMs` has passed. */
  minIterations: number;
  /** Warm-up time per task per round, in ms. */
  warmupMs: number;
}

/** Per task: the median time of one call (ms) in each round. */
export type RoundSamples = Map<string, number[]>;

let sink: unknown;

/** Runs `tasks` in `options.rounds` rotated rounds; returns each task's per-round median time per call. */
export function timeInRounds(tasks: readonly TimedTask[], options: RoundOptions): RoundSamples {
  const samples: RoundSamples = new Map(tasks.map((task) => [task.name, []]));
  for (let round = 0; round < options.rounds; round++) {
    const bench = new Bench({
      time: options.timeMs,
      iterations: options.minIterations,
      warmupTime: options.warmupMs,
      warmupIterations: Math.min(options.minIterations, 8),
      throws: true,
    });
    const shift = round % tasks.length;
    for (const task of [...tasks.slice(shift), ...tasks.slice(0, shift)]) {
      bench.add(task.name, () => {
        sink = task.fn();
      });
    }
    for (const task of bench.runSync()) {
      const p50 = task.result?.latency.p50;
      if (p50 === undefined) throw new Error(`benchmark task "${task.name}" produced no samples`);
      samples.get(task.name)!.push(p50);
    }
  }
  if (sink === Symbol.for('never')) console.log(sink);
  return samples;
}

/** The median of a task's per-round medians (ms per call). */
export function medianOf(samples: RoundSamples, name: string): number {
  const values = samples.get(name);
  if (values === undefined) throw new Error(`no samples for "${name}"`);
  return median(values);
}

/** The median over rounds of `numerator / denominator`, each pair measured in the same round. */
export function pairedRatio(samples: RoundSamples, numerator: string, denominator: string): number {
  const top = samples.get(numerator);
  const bottom = samples.get(denominator);
  if (top === undefined || bottom === undefined) throw new Error(`no samples for "${numerator}" or "${denominator}"`);
  return median(top.map((value, round) => value / bottom[round]!));
}
