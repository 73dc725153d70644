/**
 * The one reader of an upstream's retry hint: `retry-after-ms` (milliseconds, as the official SDKs send
 * and read it), else `retry-after` (RFC 9110 §10.2.3: delay-seconds or an HTTP-date). Pure: a date is
 * returned as a point in time, and turned into a delay by whoever holds a clock
 * ({@link retryAfterDelayMs}).
 *
 * @module
 */

/** A usable retry hint: a delay, or a point in time (milliseconds since the epoch). */
export type RetryAfter = { readonly delayMs: number } | { readonly untilMs: number };

/** RFC 9110 §5.6.7 HTTP-date: IMF-fixdate, or the obsolete RFC 850 form, both explicitly in GMT. */
const GMT_DATE =
  /^(?:[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4}|[A-Z][a-z]+, \d{2}-[A-Z][a-z]{2}-\d{2}) \d{2}:\d{2}:\d{2} GMT$/;
/** The obsolete asctime form, which carries no zone but is GMT too. */
const ASCTIME_DATE = /^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;
/** A non-negative decimal number: no sign, no exponent, no unit. */
const DECIMAL = /^\d+(?:\.\d+)?$/;

/**
 * Parses an HTTP-date, or returns NaN. Only the three RFC 9110 forms are accepted: `Date.parse` alone
 * reads junk such as `-1` or `in 5` as dates in 2001 (an immediate retry), and asctime as local time.
 */
function parseHttpDate(value: string): number {
  if (GMT_DATE.test(value)) return Date.parse(value);
  if (ASCTIME_DATE.test(value)) return Date.parse(`${value} GMT`);
  return Number.NaN;
}

/** A non-negative decimal, or undefined for anything else (a sign, a unit, a word, nothing). */
function decimal(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (!DECIMAL.test(trimmed)) return undefined;
  const number = Number(trimmed);
  return Number.isFinite(number) ? number : undefined;
}

/**
 * The retry hint in `headers` (lower-case names), or undefined when there is none or none is usable.
 * A malformed `retry-after-ms` leaves `retry-after` to decide.
 *
 * @example
 * parseRetryAfter({ 'retry-after': '120' })                           // → { delayMs: 120_000 }
 * parseRetryAfter({ 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }) // → { untilMs: 1445412480000 }
 * parseRetryAfter({ 'retry-after': '-1' })                            // → undefined
 */
export function parseRetryAfter(
  headers: Readonly<Record<string, string | undefined>> | undefined,
): RetryAfter | undefined {
  if (headers === undefined) return undefined;
  const milliseconds = decimal(headers['retry-after-ms']);
  if (milliseconds !== undefined) return { delayMs: milliseconds };
  const retryAfter = headers['retry-after'];
  if (retryAfter === undefined) return undefined;
  const seconds = decimal(retryAfter);
  if (seconds !== undefined) return { delayMs: seconds * 1000 };
  const date = parseHttpDate(retryAfter.trim());
  return Number.isFinite(date) ? { untilMs: date } : undefined;
}

/** How long from `nowMs` a hint asks to wait, in milliseconds (0 for a date already past). */
export function retryAfterDelayMs(hint: RetryAfter, nowMs: number): number {
  return 'delayMs' in hint ? hint.delayMs : Math.max(0, hint.untilMs - nowMs);
}
