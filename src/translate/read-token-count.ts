/**
 * Reads one token count of an upstream usage object.
 *
 * @module
 */

/**
 * The count as a non-negative safe integer, or `undefined` when the value is not a finite number.
 * Negative counts read as 0, fractional ones are rounded down, and counts above
 * `Number.MAX_SAFE_INTEGER` read as that bound: beyond 2^53 a double no longer holds every integer, so
 * sums and differences of counts would round.
 */
export function readTokenCount(value: unknown): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  return Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, Math.floor(value)));
}
