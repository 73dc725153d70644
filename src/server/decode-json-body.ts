/**
 * A request body's bytes as a JSON value, or the 400 that says why not: bytes that are not UTF-8 (never
 * replaced by U+FFFD and sent on as if the client had written that), nesting deeper than
 * {@link MAX_JSON_DEPTH} (which would overflow the stack of whatever walks the value next), or a syntax
 * error, named as the parser names it.
 *
 * @module
 */
import { JSON_TOO_DEEP, MAX_JSON_DEPTH, scanJsonText } from '../protocol/json-nesting-depth.js';
import { proxyError } from './error-response.js';
import { parseExactJson } from '../protocol/exact-json.js';

/** Refuses invalid UTF-8 instead of replacing it; a leading byte order mark is left to the parser. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Decodes and parses a request body; throws a 400 proxy error for each way it can be unusable. */
export function decodeJsonBody(raw: Uint8Array): { text: string; value: unknown } {
  let text: string;
  try {
    text = STRICT_UTF8.decode(raw);
  } catch {
    throw proxyError(400, 'the request body is not valid UTF-8: send the JSON encoded as UTF-8');
  }
  const flags = scanJsonText(text);
  if ((flags & JSON_TOO_DEEP) !== 0) {
    throw proxyError(
      400,
      `the request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`,
    );
  }
  try {
    return { text, value: parseExactJson(text, flags) };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw proxyError(400, `the request body is not valid JSON: ${reason}`);
  }
}
