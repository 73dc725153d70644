/**
 * Settings every property test shares, installed before each test file by `property-setup.ts`.
 *
 * - A time limit: after {@link PROPERTY_TIME_LIMIT_MS} a property starts no new run and no new shrink
 *   step. A property that found a counterexample is reported as failed with the smallest one found so
 *   far, instead of shrinking for minutes; one that found none passes with the runs it managed (a busy
 *   machine runs fewer, never fails for being slow). The limit holds for synchronous properties too,
 *   which the test runner's own timeout cannot stop.
 * - A seed that differs on every run, so each run explores new inputs, and that a failure names
 *   together with the variable that replays it: `TPX_FUZZ_SEED=<seed> npx vitest run <file>`.
 *
 * @module
 */
import fc from 'fast-check';

/** How long one property may run, shrinking included, before it stops and reports what it has. */
export const PROPERTY_TIME_LIMIT_MS = 5_000;

/**
 * The variable that shortens that limit, for mutation runs: there every surviving mutant runs each
 * property that reaches it for the whole limit, which on a busy machine makes a run take hours. Unset,
 * the limit is {@link PROPERTY_TIME_LIMIT_MS}.
 */
export const TIME_LIMIT_VARIABLE = 'TPX_PROPERTY_TIME_LIMIT_MS';

/** The variable that fixes the seed, to replay a failing run. */
export const SEED_VARIABLE = 'TPX_FUZZ_SEED';

/**
 * The seed for this run: `TPX_FUZZ_SEED` when set (an integer), else a fresh random 32-bit one.
 * Throws for a value that is not an integer, rather than silently running with another seed.
 */
export function propertySeed(env: Record<string, string | undefined>): number {
  const value = env[SEED_VARIABLE]?.trim();
  if (value === undefined || value === '') return Math.floor(Math.random() * 0x1_0000_0000) | 0;
  const seed = Number(value);
  if (!Number.isSafeInteger(seed)) {
    throw new Error(
      `${SEED_VARIABLE} is ${JSON.stringify(value)}; set it to the integer seed a failure printed`,
    );
  }
  return seed;
}

/**
 * The time limit for this run: `TPX_PROPERTY_TIME_LIMIT_MS` when set (a positive integer), else
 * {@link PROPERTY_TIME_LIMIT_MS}. Throws for any other value, rather than silently running with another
 * limit.
 */
export function propertyTimeLimitMs(env: Record<string, string | undefined>): number {
  const value = env[TIME_LIMIT_VARIABLE]?.trim();
  if (value === undefined || value === '') return PROPERTY_TIME_LIMIT_MS;
  const limit = Number(value);
  if (!Number.isSafeInteger(limit) || limit <= 0) {
    throw new Error(
      `${TIME_LIMIT_VARIABLE} is ${JSON.stringify(value)}; set it to a whole number of milliseconds above 0`,
    );
  }
  return limit;
}

/**
 * Installs the shared settings (time limit, seed, a failure message naming the replay variable) for
 * every `fc.assert` in this process that does not override them, and returns the seed.
 */
export function configureProperties(env: Record<string, string | undefined> = process.env): number {
  const seed = propertySeed(env);
  fc.configureGlobal({
    seed,
    interruptAfterTimeLimit: propertyTimeLimitMs(env),
    markInterruptAsFailure: false,
    reporter(details) {
      if (!details.failed) return;
      const report = fc.defaultReportMessage(details) ?? 'Property failed';
      const replay = `Replay this run with ${SEED_VARIABLE}=${details.seed}`;
      throw new Error(`${report}\n\n${replay}`, { cause: details.errorInstance ?? undefined });
    },
  });
  return seed;
}
