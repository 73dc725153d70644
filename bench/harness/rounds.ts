/**
 * Side-by-side timing of in-process tasks, in many short interleaved rounds.
 *
 * On a noisy machine a slow second hurts whichever task happens to run in it. So the tasks of a
 * comparison form a group and run back to back, one short batch each (about `batchMs`), and this
 * repeats for many rounds, the order of the groups and of the tasks inside each group rotating from
 * round to round. A comparison is judged by the ratio of two batches measured moments apart, in the
 * same round: the median of those per-round ratios is what the report quotes, next to the median over
 * rounds of each task's mean time per call.
 *
 * A batch's time is the mean of its calls, garbage collection included: a median of single calls would
 * leave out the few calls that paid for everyone's garbage.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { median, percentile } from './stats.js';

/** One timed function. It runs synchronously; its result is kept alive so it cannot be optimised away. */
export interface TimedTask {
  name: string;
  fn: () => unknown;
}

/** How long and how often to time. */
export interface RoundOptions {
  /** Rounds; each runs one batch of every task. */
  rounds: number;
  /** Target duration of one batch, in ms; a call that takes longer makes a batch of one call. */
  batchMs: number;
  /** Warm-up per task before the first round (the JIT settles), in ms. */
  warmupMs: number;
}

/** Per task: the mean time of one call (ms) in each round. */
export type RoundSamples = Map<string, number[]>;

let sink: unknown;

/** Calls `fn` `count` times; returns the mean time per call in ms. */
function batch(fn: () => unknown, count: number): number {
  const startedAt = performance.now();
  for (let call = 0; call < count; call++) sink = fn();
  return (performance.now() - startedAt) / count;
}

/** Runs `fn` for about `ms` (at least twice); returns the mean time per call in ms. */
function runFor(fn: () => unknown, ms: number): number {
  let calls = 0;
  const startedAt = performance.now();
  do {
    sink = fn();
    calls++;
  } while (calls < 2 || performance.now() - startedAt < ms);
  return (performance.now() - startedAt) / calls;
}

/**
 * Warms every task up, sizes its batch from the warm-up, then runs `options.rounds` rounds.
 *
 * @returns each task's mean time per call in each round
 */
export function timeInRounds(groups: readonly (readonly TimedTask[])[], options: RoundOptions): RoundSamples {
  const tasks = groups.flat();
  const samples: RoundSamples = new Map(tasks.map((task) => [task.name, []]));
  const batchSize = new Map<string, number>();
  for (const task of tasks) {
    const perCall = runFor(task.fn, options.warmupMs);
    batchSize.set(task.name, Math.max(1, Math.round(options.batchMs / perCall)));
  }
  for (let round = 0; round < options.rounds; round++) {
    for (const group of rotate(groups, round)) {
      for (const task of rotate(group, round)) {
        samples.get(task.name)!.push(batch(task.fn, batchSize.get(task.name)!));
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

/** A ratio measured round by round: the median, and the quartiles that show how much it moved. */
export interface RatioSpread {
  median: number;
  p25: number;
  p75: number;
}

/** `numerator / denominator` over the rounds, each pair measured in the same round. */
export function pairedRatio(samples: RoundSamples, numerator: string, denominator: string): RatioSpread {
  const top = samples.get(numerator);
  const bottom = samples.get(denominator);
  if (top === undefined || bottom === undefined) {
    throw new Error(`no samples for "${numerator}" or "${denominator}"`);
  }
  const ratios = top.map((value, round) => value / bottom[round]!);
  return { median: median(ratios), p25: percentile(ratios, 25), p75: percentile(ratios, 75) };
}
