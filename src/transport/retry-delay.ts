/**
 * How long to wait before retrying: a pure function of the attempt number, the upstream's hints, the
 * clock and a random source (all injected, so it is testable with fixed values).
 *
 * Order of precedence, as the official SDKs do it: `retry-after-ms`, then `retry-after` (seconds or an
 * HTTP date, RFC 9110 §10.2.3), used when between 0 and `maxRetryAfterMs`; otherwise exponential backoff
 * from `initialDelayMs`, doubling per attempt, capped at `maxDelayMs`, minus up to 25 % jitter.
 *
 * @module
 */

export interface RetryDelayInput {
  /** 0 for the first retry, 1 for the second, … */
  retryIndex: number;
  /** Response headers of the failed attempt (lower-case names). */
  headers?: Readonly<Record<string, string>>;
  /** Now, in milliseconds since the epoch. */
  nowMs: number;
  /** A number in [0, 1). */
  random: number;
  /** @default 500 */
  initialDelayMs?: number;
  /** @default 8_000 */
  maxDelayMs?: number;
  /** Upstream hints longer than this are ignored in favour of backoff. @default 60_000 */
  maxRetryAfterMs?: number;
}

/** RFC 9110 §5.6.7 HTTP-date: IMF-fixdate, or the obsolete RFC 850 form, both explicitly in GMT. */
const GMT_DATE =
  /^(?:[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4}|[A-Z][a-z]+, \d{2}-[A-Z][a-z]{2}-\d{2}) \d{2}:\d{2}:\d{2} GMT$/;
/** The obsolete asctime form, which carries no zone but is GMT too. */
const ASCTIME_DATE = /^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

/**
 * Parses an HTTP-date, or returns NaN. Only the three RFC 9110 forms are accepted: `Date.parse` alone
 * reads junk such as `-1` or `in 5` as dates in 2001 (an immediate retry), and asctime as local time.
 */
function parseHttpDate(value: string): number {
  if (GMT_DATE.test(value)) return Date.parse(value);
  if (ASCTIME_DATE.test(value)) return Date.parse(`${value} GMT`);
  return Number.NaN;
}

/** The delay an upstream asked for, in ms, or undefined when it gave none (or an unusable one). */
export function retryAfterFromHeaders(
  headers: Readonly<Record<string, string>> | undefined,
  nowMs: number,
): number | undefined {
  if (headers === undefined) return undefined;
  const milliseconds = headers['retry-after-ms'];
  if (milliseconds !== undefined) {
    const value = Number.parseFloat(milliseconds);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const retryAfter = headers['retry-after'];
  if (retryAfter !== undefined) {
    const trimmed = retryAfter.trim();
    if (/^\d+(\.\d+)?$/.test(trimmed)) return Number.parseFloat(trimmed) * 1000;
    const date = parseHttpDate(trimmed);
    if (Number.isFinite(date)) return Math.max(0, date - nowMs);
  }
  return undefined;
}

/** The delay before the next attempt, in milliseconds (never negative). */
export function retryDelayMs(input: RetryDelayInput): number {
  const maxRetryAfterMs = input.maxRetryAfterMs ?? 60_000;
  const hinted = retryAfterFromHeaders(input.headers, input.nowMs);
  if (hinted !== undefined && hinted >= 0 && hinted <= maxRetryAfterMs) return Math.ceil(hinted);
  const initial = input.initialDelayMs ?? 500;
  const cap = input.maxDelayMs ?? 8_000;
  const base = Math.min(initial * 2 ** input.retryIndex, cap);
  const jitter = 1 - Math.min(Math.max(input.random, 0), 1) * 0.25;
  return Math.max(0, Math.round(base * jitter));
}
