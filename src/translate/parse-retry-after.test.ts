import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRetryAfter, retryAfterDelayMs } from './parse-retry-after.js';

/** A fixed clock: Wed, 21 Oct 2015 07:28:00 GMT. */
const NOW_MS = Date.UTC(2015, 9, 21, 7, 28, 0);

/** The delay the headers ask for from the fixed clock, or undefined when they give no usable hint. */
function delayOf(headers: Record<string, string> | undefined): number | undefined {
  const hint = parseRetryAfter(headers);
  return hint === undefined ? undefined : retryAfterDelayMs(hint, NOW_MS);
}

describe('parseRetryAfter', () => {
  it('returns undefined when there are no headers or no hint', () => {
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter({})).toBeUndefined();
    expect(parseRetryAfter({ 'x-request-id': 'req_1' })).toBeUndefined();
  });

  it('reads retry-after as delay-seconds, surrounding whitespace allowed', () => {
    expect(parseRetryAfter({ 'retry-after': '3' })).toEqual({ delayMs: 3_000 });
    expect(parseRetryAfter({ 'retry-after': ' 3 ' })).toEqual({ delayMs: 3_000 });
    expect(parseRetryAfter({ 'retry-after': '1.5' })).toEqual({ delayMs: 1_500 });
  });

  it('reads delays above a minute as they are, without a ceiling', () => {
    expect(parseRetryAfter({ 'retry-after': '120' })).toEqual({ delayMs: 120_000 });
    expect(parseRetryAfter({ 'retry-after': '86400' })).toEqual({ delayMs: 86_400_000 });
  });

  it('reads a zero delay as zero (the retry policy decides what zero means)', () => {
    expect(parseRetryAfter({ 'retry-after': '0' })).toEqual({ delayMs: 0 });
    expect(parseRetryAfter({ 'retry-after-ms': '0' })).toEqual({ delayMs: 0 });
  });

  it('reads retry-after-ms as milliseconds, fractions included', () => {
    expect(parseRetryAfter({ 'retry-after-ms': '250' })).toEqual({ delayMs: 250 });
    expect(parseRetryAfter({ 'retry-after-ms': '12.5' })).toEqual({ delayMs: 12.5 });
  });

  it('prefers retry-after-ms over retry-after when both are present', () => {
    expect(parseRetryAfter({ 'retry-after-ms': '250', 'retry-after': '7' })).toEqual({ delayMs: 250 });
  });

  it('falls back to retry-after when retry-after-ms is not a usable number', () => {
    expect(parseRetryAfter({ 'retry-after-ms': 'soon', 'retry-after': '2' })).toEqual({ delayMs: 2_000 });
    expect(parseRetryAfter({ 'retry-after-ms': '-5', 'retry-after': '2' })).toEqual({ delayMs: 2_000 });
  });

  it('reads an RFC 9110 IMF-fixdate as a point in time, turned into a delay against a clock', () => {
    expect(parseRetryAfter({ 'retry-after': 'Wed, 21 Oct 2015 07:28:05 GMT' })).toEqual({
      untilMs: NOW_MS + 5_000,
    });
    expect(delayOf({ 'retry-after': 'Wed, 21 Oct 2015 07:29:00 GMT' })).toBe(60_000);
    expect(delayOf({ 'retry-after': 'Wed, 21 Oct 2015 08:28:00 GMT' })).toBe(3_600_000);
  });

  it('accepts the obsolete RFC 850 and asctime date forms RFC 9110 asks recipients to accept, both in GMT', () => {
    expect(delayOf({ 'retry-after': 'Wednesday, 21-Oct-15 07:28:05 GMT' })).toBe(5_000);
    expect(delayOf({ 'retry-after': 'Wed Oct 21 07:28:05 2015' })).toBe(5_000);
  });

  it('reads an asctime date as GMT even when the local time zone is not UTC', () => {
    const savedZone = process.env['TZ'];
    process.env['TZ'] = 'America/New_York';
    try {
      expect(delayOf({ 'retry-after': 'Wed Oct 21 07:28:05 2015' })).toBe(5_000);
    } finally {
      if (savedZone === undefined) delete process.env['TZ'];
      else process.env['TZ'] = savedZone;
    }
  });

  it('turns an HTTP-date in the past into a delay of zero, never a negative one', () => {
    expect(delayOf({ 'retry-after': 'Wed, 21 Oct 2015 07:27:00 GMT' })).toBe(0);
  });

  it.each(['-1', '-0.5', '-120'])('ignores the negative retry-after %j', (value) => {
    expect(parseRetryAfter({ 'retry-after': value })).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after-ms': value })).toBeUndefined();
  });

  it.each(['soon', 'in 5', '1 2', '5s', '', '1e3', '0x10', 'NaN', 'Infinity', '2015-10-21T07:28:05Z'])(
    'ignores the malformed retry-after value %j',
    (value) => {
      expect(parseRetryAfter({ 'retry-after': value })).toBeUndefined();
      expect(parseRetryAfter({ 'retry-after-ms': value })).toBeUndefined();
    },
  );

  it('never yields a negative, infinite or NaN delay, whatever the headers say', () => {
    fc.assert(
      fc.property(
        fc.record({ 'retry-after': fc.string(), 'retry-after-ms': fc.string() }, { requiredKeys: [] }),
        (headers) => {
          const delay = delayOf(headers);
          if (delay === undefined) return;
          expect(Number.isFinite(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(0);
        },
      ),
    );
  });
});
