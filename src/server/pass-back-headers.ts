/**
 * Copies the upstream response headers the proxy hands back to its client: the retry hints and the
 * rate-limit state a Messages client acts on (docs/protocol.md A.0, A.9). Which ones they are is decided with
 * the list of kept headers in `translate/pick-response-headers.ts`. `request-id` is chosen separately:
 * every answer carries exactly one.
 *
 * @module
 */
import { isPassedBack } from '../translate/pick-response-headers.js';

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
