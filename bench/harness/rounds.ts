/**
 * Side-by-side timing of in-process tasks with tinybench, in interleaved rounds.
 *
 * On a noisy machine a slow minute hurts whichever task happens to run in it. So the tasks of a
 * comparison run back to back, once per round, in an order that rotates from round to round, and a
 * comparison is judged by the ratio of two tasks measured in the same round: the median of those per-round ratios is
 * what the report quotes, next to the median over rounds of each task's mean time per call.
 *
 * @module
 */
import { Bench } from 'tinybench';
import { median } from './stats.js';

/** One timed function. It runs synchronously; its result is kept alive so it cannot be optimised away. */
export interface TimedTask {
  name: string;
  fn: () => unknown;
  /** Overrides the round options for this task (long operations need fewer, fixed iterations). */
  options?: Partial<RoundOptions>;
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
  /** At least this many warm-up calls per task per round. @default min(minIterations, 8) */
  warmupIterations?: number;
}

/** Per task: the mean time of one call (ms) in each round. */
export type RoundSamples = Map<string, number[]>;

let sink: unknown;

/**
 * Runs every task once per round, for `options.rounds` rounds. Tasks that are compared with each other
 * form a group and run back to back, so that a ratio compares two measurements taken moments apart; the
 * order of the groups, and of the tasks inside each group, rotates from round to round.
 *
 * @returns each task's mean time per call in each round
 */
export function timeInRounds(groups: readonly (readonly TimedTask[])[], options: RoundOptions): RoundSamples {
  const samples: RoundSamples = new Map(groups.flat().map((task) => [task.name, []]));
  for (let round = 0; round < options.rounds; round++) {
    for (const group of rotate(groups, round)) {
      for (const task of rotate(group, round)) {
        const own = { ...options, ...task.options };
        // One bench per task, so that each task keeps its own time and iteration budget.
        const bench = new Bench({
          // The JIT is warm after the first round; later rounds only measure.
          warmup: round === 0,
          time: own.timeMs,
          iterations: own.minIterations,
          warmupTime: own.warmupMs,
          warmupIterations: own.warmupIterations ?? Math.min(own.minIterations, 8),
          throws: true,
        });
        bench.add(task.name, () => {
          sink = task.fn();
        });
        const [result] = bench.runSync();
        // The mean, not the median, of the calls: garbage collection is part of the cost, and a median of
        // short calls would leave out the few that paid for everyone's garbage.
        const mean = result?.result?.latency.mean;
        if (mean === undefined) throw new Error(`benchmark task "${task.name}" produced no samples`);
        samples.get(task.name)!.push(mean);
      }
    }
  }
  if (sink === Symbol.for('never')) console.log(sink);
  return samples;
}

function rotate<T>(items: readonly T[], by: number): T[] {
  const shift = items.length === 0 ? 0 : by % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

/** The median of a task's per-round means (ms per call). */
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
