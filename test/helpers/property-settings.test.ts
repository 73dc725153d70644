import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import {
  configureProperties,
  propertySeed,
  propertyTimeLimitMs,
  PROPERTY_TIME_LIMIT_MS,
} from './property-settings.js';

const installed = fc.readConfigureGlobal();
afterEach(() => {
  fc.configureGlobal(installed);
});

/** The message of the error `fc.assert` throws for a failing property. */
function failureMessage(run: () => void): string {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the property passed');
}

/** Spins for `ms` milliseconds: a predicate that is slow on purpose. */
function spin(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end);
}

describe('propertySeed', () => {
  it('takes the seed from TPX_FUZZ_SEED, trimmed', () => {
    expect(propertySeed({ TPX_FUZZ_SEED: ' -1234567 ' })).toBe(-1234567);
  });

  it('draws a different seed on each run when TPX_FUZZ_SEED is not set', () => {
    const seeds = new Set(Array.from({ length: 5 }, () => propertySeed({ TPX_FUZZ_SEED: '' })));
    expect(seeds.size).toBeGreaterThan(1);
    for (const seed of seeds) expect(Number.isSafeInteger(seed)).toBe(true);
  });

  it('refuses a TPX_FUZZ_SEED that is not an integer, naming the variable', () => {
    expect(() => propertySeed({ TPX_FUZZ_SEED: '12abc' })).toThrow(/^TPX_FUZZ_SEED is "12abc"; set it to/);
  });
});

describe('propertyTimeLimitMs', () => {
  it('is 5 s when TPX_PROPERTY_TIME_LIMIT_MS is not set or blank', () => {
    expect(propertyTimeLimitMs({})).toBe(5_000);
    expect(propertyTimeLimitMs({ TPX_PROPERTY_TIME_LIMIT_MS: ' ' })).toBe(5_000);
  });

  it('takes a shorter limit from TPX_PROPERTY_TIME_LIMIT_MS, trimmed', () => {
    expect(propertyTimeLimitMs({ TPX_PROPERTY_TIME_LIMIT_MS: ' 500 ' })).toBe(500);
  });

  it.each(['0', '-5', '1.5', '5s'])('refuses TPX_PROPERTY_TIME_LIMIT_MS=%s, naming the variable', (value) => {
    expect(() => propertyTimeLimitMs({ TPX_PROPERTY_TIME_LIMIT_MS: value })).toThrow(
      `TPX_PROPERTY_TIME_LIMIT_MS is ${JSON.stringify(value)}; set it to a whole number of milliseconds above 0`,
    );
  });

  it('is the limit configureProperties installs', () => {
    configureProperties({ TPX_PROPERTY_TIME_LIMIT_MS: '750' });
    expect(fc.readConfigureGlobal().interruptAfterTimeLimit).toBe(750);
  });
});

describe('the settings every property test runs with', () => {
  it('are installed before each test file: a time limit and a seed', () => {
    expect(installed.interruptAfterTimeLimit).toBe(PROPERTY_TIME_LIMIT_MS);
    expect(installed.markInterruptAsFailure).toBe(false);
    expect(Number.isSafeInteger(installed.seed)).toBe(true);
  });

  it('report a failing property with its counterexample and the variable that replays the run', () => {
    const message = failureMessage(() => fc.assert(fc.property(fc.nat(), (n) => n < 100)));
    expect(message).toContain('Counterexample: [100]');
    expect(message).toContain(`Replay this run with TPX_FUZZ_SEED=${installed.seed}`);
  });

  it('replay the same inputs for the same TPX_FUZZ_SEED', () => {
    const drawn = () => {
      configureProperties({ TPX_FUZZ_SEED: '20261201' });
      const values: string[] = [];
      fc.assert(
        fc.property(fc.string(), (text) => {
          values.push(text);
        }),
        { numRuns: 20 },
      );
      return values;
    };
    const first = drawn();
    expect(drawn()).toEqual(first);
    expect(new Set(first).size).toBeGreaterThan(1);
  });

  it('report a failure part-way through a long shrink as soon as the time limit passes', () => {
    let calls = 0;
    const message = failureMessage(() =>
      fc.assert(
        fc.property(fc.array(fc.nat(), { minLength: 200, maxLength: 400 }), () => {
          calls++;
          spin(20); // every run fails, slowly: a full shrink takes about 200 steps, 4 s
          return false;
        }),
        { interruptAfterTimeLimit: 300 },
      ),
    );
    expect(message).toMatch(/Counterexample: \[\[/);
    expect(message).toContain('Replay this run with TPX_FUZZ_SEED=');
    // Stopped part-way through shrinking (at 20 ms a call, 300 ms allow about 15 calls, not 200).
    expect(calls).toBeLessThan(300 / 20 + 5);
  });
});
