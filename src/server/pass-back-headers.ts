/**
 * Which upstream response headers the proxy hands back to its client: the retry hints and the
 * rate-limit state a Messages client acts on (PROTOCOLS.md A.0, A.9). `request-id` is chosen separately:
 * every answer carries exactly one.
 *
 * @module
 */

const RATE_LIMIT_PREFIX = 'anthropic-ratelimit-';

/** Whether a (lower-case) header name is passed back to the client. */
export function isPassedBack(name: string): boolean {
  return (
    name === 'retry-after' ||
    name === 'retry-after-ms' ||
    name === 'x-should-retry' ||
    name.startsWith(RATE_LIMIT_PREFIX)
  );
}

/** Copies the headers worth passing back from `source` into `target` (names lower-cased). */
export function passBackHeaders(
  source: Readonly<Record<string, string>>,
  target: Record<string, string>,
): void {
  for (const name in source) {
    const lower = name.toLowerCase();
    if (isPassedBack(lower)) target[lower] = source[name]!;
  }
}
