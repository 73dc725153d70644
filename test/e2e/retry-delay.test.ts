import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { retryDelayMs } from '../../src/transport/retry-delay.js';

/** A fixed clock: Wed, 21 Oct 2015 07:28:00 GMT. */
const NOW_MS = Date.UTC(2015, 9, 21, 7, 28, 0);

describe('retryDelayMs', () => {
  it('waits exactly what retry-after-ms asks, rounded up to a whole millisecond', () => {
    expect(
      retryDelayMs({ retryIndex: 0, headers: { 'retry-after-ms': '250' }, nowMs: NOW_MS, random: 0.9 }),
    ).toBe(250);
    expect(
      retryDelayMs({ retryIndex: 3, headers: { 'retry-after-ms': '12.2' }, nowMs: NOW_MS, random: 0.5 }),
    ).toBe(13);
  });

  it('waits the retry-after seconds, ignoring attempt number and jitter', () => {
    expect(
      retryDelayMs({ retryIndex: 4, headers: { 'retry-after': '2' }, nowMs: NOW_MS, random: 0.99 }),
    ).toBe(2_000);
  });

  it('waits until the retry-after HTTP-date', () => {
    const headers = { 'retry-after': 'Wed, 21 Oct 2015 07:28:10 GMT' };
    expect(retryDelayMs({ retryIndex: 0, headers, nowMs: NOW_MS, random: 0 })).toBe(10_000);
  });

  it('waits a hint longer than a minute as asked (the total deadline decides whether it fits)', () => {
    expect(retryDelayMs({ retryIndex: 0, headers: { 'retry-after': '61' }, nowMs: NOW_MS, random: 0 })).toBe(
      61_000,
    );
    expect(
      retryDelayMs({ retryIndex: 1, headers: { 'retry-after-ms': '3600000' }, nowMs: NOW_MS, random: 0 }),
    ).toBe(3_600_000);
    const farDate = { 'retry-after': 'Thu, 22 Oct 2015 07:28:00 GMT' };
    expect(retryDelayMs({ retryIndex: 2, headers: farDate, nowMs: NOW_MS, random: 0 })).toBe(86_400_000);
  });

  it('backs off instead of retrying at once when the hint is zero or a date already past', () => {
    expect(retryDelayMs({ retryIndex: 0, headers: { 'retry-after': '0' }, nowMs: NOW_MS, random: 0 })).toBe(
      500,
    );
    expect(
      retryDelayMs({ retryIndex: 1, headers: { 'retry-after-ms': '0' }, nowMs: NOW_MS, random: 0 }),
    ).toBe(1_000);
    const pastDate = { 'retry-after': 'Wed, 21 Oct 2015 07:27:00 GMT' };
    expect(retryDelayMs({ retryIndex: 2, headers: pastDate, nowMs: NOW_MS, random: 0 })).toBe(2_000);
  });

  it('backs off instead of retrying at once when retry-after is malformed', () => {
    expect(retryDelayMs({ retryIndex: 1, headers: { 'retry-after': '-1' }, nowMs: NOW_MS, random: 0 })).toBe(
      1_000,
    );
  });

  it('doubles the backoff per attempt from 500 ms and caps it at 8 s', () => {
    const delays = [0, 1, 2, 3, 4, 5, 6, 10].map((retryIndex) =>
      retryDelayMs({ retryIndex, nowMs: NOW_MS, random: 0 }),
    );
    expect(delays).toEqual([500, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000, 8_000]);
  });

  it('uses a custom initial delay and cap', () => {
    const delays = [0, 1, 2, 3].map((retryIndex) =>
      retryDelayMs({ retryIndex, nowMs: NOW_MS, random: 0, initialDelayMs: 100, maxDelayMs: 350 }),
    );
    expect(delays).toEqual([100, 200, 350, 350]);
  });

  it('takes up to 25 % off the backoff as jitter', () => {
    expect(retryDelayMs({ retryIndex: 2, nowMs: NOW_MS, random: 0 })).toBe(2_000);
    expect(retryDelayMs({ retryIndex: 2, nowMs: NOW_MS, random: 0.5 })).toBe(1_750);
    expect(retryDelayMs({ retryIndex: 2, nowMs: NOW_MS, random: 0.999_999 })).toBe(1_500);
  });

  it('keeps every backoff within [75 %, 100 %] of the capped exponential delay', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (retryIndex, random) => {
          const base = Math.min(500 * 2 ** retryIndex, 8_000);
          const delay = retryDelayMs({ retryIndex, nowMs: NOW_MS, random });
          expect(Number.isInteger(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(Math.floor(base * 0.75));
          expect(delay).toBeLessThanOrEqual(base);
        },
      ),
    );
  });

  it('never returns a negative or non-integer delay, whatever the headers say', () => {
    fc.assert(
      fc.property(
        fc.record({ 'retry-after': fc.string(), 'retry-after-ms': fc.string() }, { requiredKeys: [] }),
        fc.integer({ min: 0, max: 10 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (headers, retryIndex, random) => {
          const delay = retryDelayMs({ retryIndex, headers, nowMs: NOW_MS, random });
          expect(Number.isInteger(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(0);
        },
      ),
    );
  });
});
