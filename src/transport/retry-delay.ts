/**
 * How long to wait before retrying: a pure function of the attempt number, the upstream's hint, the
 * clock and a random source (all injected, so it is testable with fixed values).
 *
 * The upstream's hint (`retry-after-ms`, else `retry-after` in seconds or as an HTTP date; see
 * `translate/parse-retry-after.ts`) is waited for as given, however long: whether it still fits in the
 * exchange's total deadline is the caller's decision (it gives up rather than sleep past the deadline).
 * Without a hint, or with a hint of zero (or a date already past), the wait is exponential backoff from
 * `initialDelayMs`, doubling per attempt, capped at `maxDelayMs`, minus up to 25 % jitter: a server
 * that says "now" after failing is not asking to be hit again at once, by every client at the same time.
 *
 * @module
 */
import { parseRetryAfter, retryAfterDelayMs } from '../translate/parse-retry-after.js';

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
}

/** The delay before the next attempt, in whole milliseconds (never negative). */
export function retryDelayMs(input: RetryDelayInput): number {
  const hint = parseRetryAfter(input.headers);
  const hinted = hint === undefined ? 0 : retryAfterDelayMs(hint, input.nowMs);
  if (hinted > 0) return Math.ceil(hinted);
  const initial = input.initialDelayMs ?? 500;
  const cap = input.maxDelayMs ?? 8_000;
  const base = Math.min(initial * 2 ** input.retryIndex, cap);
  const jitter = 1 - Math.min(Math.max(input.random, 0), 1) * 0.25;
  return Math.max(0, Math.round(base * jitter));
}
