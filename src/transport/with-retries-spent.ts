/**
 * The error an exchange ends with once its own retries are spent (or the upstream's wait would run past
 * the total deadline): the same error, saying `x-should-retry: false`.
 *
 * A client in front — the official SDKs, Claude Code — retries 408, 409, 429 and 5xx on its own unless
 * the answer says `x-should-retry: false`; without it, three proxy attempts under three client attempts
 * make nine upstream requests in an overload. The proxy passes this header on to its client; a library
 * caller can read it in `error.headers`. `retryable` still says what kind of failure it was.
 *
 * @module
 */
import { TransportError } from '../errors.js';

export function withRetriesSpent(error: TransportError): TransportError {
  if (error.headers['x-should-retry'] === 'false') return error;
  return new TransportError(error.code, error.message, {
    status: error.status,
    type: error.body.error.type,
    retryable: error.retryable,
    headers: { ...error.headers, 'x-should-retry': 'false' },
    cause: error.cause,
    ...(error.provider === undefined ? {} : { provider: error.provider }),
    ...(error.requestId === undefined ? {} : { requestId: error.requestId }),
    ...(error.deadline === undefined ? {} : { deadline: error.deadline }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
  });
}
