import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { retryAfterFromHeaders, retryDelayMs } from '../../src/transport/retry-delay.js';

/** A fixed clock: Wed, 21 Oct 2015 07:28:00 GMT. */
const NOW_MS = Date.UTC(2015, 9, 21, 7, 28, 0);

describe('retryAfterFromHeaders', () => {
  it('returns undefined when there are no headers or no hint', () => {
    expect(retryAfterFromHeaders(undefined, NOW_MS)).toBeUndefined();
    expect(retryAfterFromHeaders({}, NOW_MS)).toBeUndefined();
    expect(retryAfterFromHeaders({ 'x-request-id': 'req_1' }, NOW_MS)).toBeUndefined();
  });

  it('reads retry-after-ms as milliseconds, fractions included', () => {
    expect(retryAfterFromHeaders({ 'retry-after-ms': '250' }, NOW_MS)).toBe(250);
    expect(retryAfterFromHeaders({ 'retry-after-ms': '12.5' }, NOW_MS)).toBe(12.5);
    expect(retryAfterFromHeaders({ 'retry-after-ms': '0' }, NOW_MS)).toBe(0);
  });

  it('prefers retry-after-ms over retry-after when both are present', () => {
    expect(retryAfterFromHeaders({ 'retry-after-ms': '250', 'retry-after': '7' }, NOW_MS)).toBe(250);
  });

  it('falls back to retry-after when retry-after-ms is not a usable number', () => {
    expect(retryAfterFromHeaders({ 'retry-after-ms': 'soon', 'retry-after': '2' }, NOW_MS)).toBe(2_000);
    expect(retryAfterFromHeaders({ 'retry-after-ms': '-5', 'retry-after': '2' }, NOW_MS)).toBe(2_000);
  });

  it('reads retry-after as delay-seconds, surrounding whitespace allowed', () => {
    expect(retryAfterFromHeaders({ 'retry-after': '3' }, NOW_MS)).toBe(3_000);
    expect(retryAfterFromHeaders({ 'retry-after': ' 3 ' }, NOW_MS)).toBe(3_000);
    expect(retryAfterFromHeaders({ 'retry-after': '1.5' }, NOW_MS)).toBe(1_500);
    expect(retryAfterFromHeaders({ 'retry-after': '0' }, NOW_MS)).toBe(0);
  });

  it('reads retry-after as an RFC 9110 IMF-fixdate relative to the injected clock', () => {
    expect(retryAfterFromHeaders({ 'retry-after': 'Wed, 21 Oct 2015 07:28:05 GMT' }, NOW_MS)).toBe(5_000);
    expect(retryAfterFromHeaders({ 'retry-after': 'Wed, 21 Oct 2015 07:29:00 GMT' }, NOW_MS)).toBe(60_000);
  });

  it('accepts the obsolete RFC 850 and asctime date forms RFC 9110 asks recipients to accept, both in GMT', () => {
    expect(retryAfterFromHeaders({ 'retry-after': 'Wednesday, 21-Oct-15 07:28:05 GMT' }, NOW_MS)).toBe(5_000);
    expect(retryAfterFromHeaders({ 'retry-after': 'Wed Oct 21 07:28:05 2015' }, NOW_MS)).toBe(5_000);
  });

  it('reads an asctime date as GMT even when the local time zone is not UTC', () => {
    const savedZone = process.env['TZ'];
    process.env['TZ'] = 'America/New_York';
    try {
      expect(retryAfterFromHeaders({ 'retry-after': 'Wed Oct 21 07:28:05 2015' }, NOW_MS)).toBe(5_000);
      expect(
        retryAfterFromHeaders({ 'retry-after': 'Wed Oct  1 07:28:05 2015' }, Date.UTC(2015, 9, 1, 7, 28, 0)),
      ).toBe(5_000);
    } finally {
      if (savedZone === undefined) delete process.env['TZ'];
      else process.env['TZ'] = savedZone;
    }
  });

  it('treats an HTTP-date in the past as "retry now"', () => {
    expect(retryAfterFromHeaders({ 'retry-after': 'Wed, 21 Oct 2015 07:27:00 GMT' }, NOW_MS)).toBe(0);
  });

  it.each(['soon', '-1', 'in 5', '1 2', '5s', ''])('ignores the malformed retry-after value %j', (value) => {
    expect(retryAfterFromHeaders({ 'retry-after': value }, NOW_MS)).toBeUndefined();
  });
});

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

  it('accepts a hint exactly at the 60 s default limit', () => {
    expect(retryDelayMs({ retryIndex: 0, headers: { 'retry-after': '60' }, nowMs: NOW_MS, random: 0 })).toBe(
      60_000,
    );
  });

  it('ignores a hint longer than the limit and backs off instead', () => {
    expect(retryDelayMs({ retryIndex: 0, headers: { 'retry-after': '61' }, nowMs: NOW_MS, random: 0 })).toBe(
      500,
    );
    expect(
      retryDelayMs({ retryIndex: 1, headers: { 'retry-after-ms': '3600000' }, nowMs: NOW_MS, random: 0 }),
    ).toBe(1_000);
    const farDate = { 'retry-after': 'Thu, 22 Oct 2015 07:28:00 GMT' };
    expect(retryDelayMs({ retryIndex: 2, headers: farDate, nowMs: NOW_MS, random: 0 })).toBe(2_000);
  });

  it('honours a custom maxRetryAfterMs', () => {
    const headers = { 'retry-after': '5' };
    expect(retryDelayMs({ retryIndex: 0, headers, nowMs: NOW_MS, random: 0, maxRetryAfterMs: 4_999 })).toBe(
      500,
    );
    expect(retryDelayMs({ retryIndex: 0, headers, nowMs: NOW_MS, random: 0, maxRetryAfterMs: 5_000 })).toBe(
      5_000,
    );
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
          expect(delay).toBeLessThanOrEqual(60_000);
        },
      ),
    );
  });
});
