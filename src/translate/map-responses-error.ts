/**
 * Maps an error the Responses API reports after a 200 — a `response.failed` event's `response.error`, an
 * `error` stream event, a JSON answer with `status: "failed"` — to a `TransportError`.
 *
 * @module
 */
import type { TransportError } from '../errors.js';
import { mapStreamErrorObject } from './map-stream-error-object.js';
import { isObject } from '../protocol/is-object.js';

/**
 * The HTTP status a Responses error code stands for, where the code says it: these errors arrive with a
 * 200 status line, so the code is all there is to classify them by.
 */
const STATUS_BY_CODE: ReadonlyMap<string, number> = new Map([
  ['insufficient_quota', 402],
  ['rate_limit_exceeded', 429],
  ['server_error', 500],
  ['invalid_prompt', 400],
  ['context_length_exceeded', 400],
  ['invalid_request_error', 400],
]);

/**
 * The `TransportError` for a Responses error object (`{code, message}`, OpenAI's `error` event with the
 * object at the top or under `error`, or a bare string). Known codes get their status (quota exhausted:
 * 402 `billing_error`, not retried; rate limited: as any 429 inside a stream; `server_error`: 500,
 * retried); the rest is classified as `mapStreamErrorObject` classifies Chat Completions stream errors.
 *
 * @example
 * mapResponsesError({ code: 'insufficient_quota', message: 'You exceeded your current quota…' })
 * // → MODEL_EHTTP 402 billing_error, not retryable
 */
export function mapResponsesError(error: unknown): TransportError {
  const inner = isObject(error) && isObject(error['error']) ? error['error'] : error;
  if (!isObject(inner))
    return mapStreamErrorObject(inner ?? 'the upstream reported a failure without details', 'tpx');
  const code =
    typeof inner['code'] === 'string'
      ? inner['code']
      : typeof inner['type'] === 'string'
        ? inner['type']
        : undefined;
  const status = code === undefined ? undefined : STATUS_BY_CODE.get(code);
  if (status === undefined || inner['status_code'] !== undefined) return mapStreamErrorObject(inner, 'tpx');
  return mapStreamErrorObject({ ...inner, status_code: status }, 'tpx');
}
