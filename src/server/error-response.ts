/**
 * The one place where a failure becomes what a Messages client expects: an HTTP error response with a
 * Messages error body (before any byte of a stream was sent), or an SSE `error` frame (after).
 *
 * ```text
 * HTTP/1.1 429                                      event: error
 * retry-after: 7                                    data: {"type":"error","error":{"type":"overloaded_error",…}}
 * {"type":"error","error":{"type":"rate_limit_error","message":"…"},"request_id":"req_…"}
 * ```
 *
 * @module
 */
import { TransportError, errorTypeForStatus, isTransportError, type MessagesErrorBody } from '../errors.js';
import { passBackHeaders } from './pass-back-headers.js';
import type { JsonResponse } from './types.js';
import { encodeSseFrame } from './write-sse.js';

/** The statuses the proxy answers on its own account. */
export type ProxyErrorStatus = 400 | 401 | 403 | 404 | 405 | 408 | 413 | 415;

/**
 * An error the proxy raises itself (bad body, unknown route, missing proxy token, body too large), as a
 * `TransportError` with the matching code and Messages error type.
 */
export function proxyError(status: ProxyErrorStatus, message: string): TransportError {
  const type = errorTypeForStatus(status);
  switch (status) {
    case 401:
      return new TransportError('MODEL_EAUTH', message, { status, type });
    case 413:
      return new TransportError('MODEL_ETOOBIG', message, { status, type });
    case 408:
      return new TransportError('MODEL_ETIMEOUT', message, { status, type, retryable: false });
    case 400:
    case 403:
    case 404:
    case 405:
    case 415:
      return new TransportError('MODEL_EINVAL', message, { status, type });
  }
}

/**
 * Any thrown value as a `TransportError`. Something that is not one is a fault of the proxy itself,
 * answered as a 500 `api_error` that says so without echoing internals.
 */
export function asTransportError(error: unknown): TransportError {
  if (isTransportError(error)) return error;
  return new TransportError('MODEL_EPROTO', 'the proxy failed while handling this request', {
    status: 500,
    type: 'api_error',
    cause: error,
  });
}

/** An HTTP status a client can act on: the error's own, unless it is not an error status at all. */
function httpStatus(error: TransportError): number {
  return error.status >= 400 && error.status <= 599 ? error.status : 500;
}

function bodyWithRequestId(error: TransportError, requestId: string): MessagesErrorBody {
  return error.body.request_id === undefined ? { ...error.body, request_id: requestId } : error.body;
}

/**
 * The HTTP answer for a failure before anything was sent: status = `error.status`, body = `error.body`
 * (with a `request_id`), `retry-after` and rate-limit headers passed on from the error and from the
 * upstream response, when there was one.
 */
export function errorResponse(
  error: unknown,
  requestId: string,
  upstreamHeaders: Readonly<Record<string, string>> | undefined = undefined,
): JsonResponse {
  const transportError = asTransportError(error);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'request-id': requestId };
  if (upstreamHeaders !== undefined) passBackHeaders(upstreamHeaders, headers);
  passBackHeaders(transportError.headers, headers);
  return {
    kind: 'json',
    status: httpStatus(transportError),
    headers,
    body: JSON.stringify(bodyWithRequestId(transportError, requestId)),
  };
}

/** The Messages error body a failure is answered with, as JSON text (for the journal). */
export function errorBodyText(error: unknown, requestId: string): string {
  return JSON.stringify(bodyWithRequestId(asTransportError(error), requestId));
}

/** The SSE `error` frame for a failure after the stream started (its HTTP status can no longer change). */
export function errorFrame(error: unknown, requestId: string): string {
  return encodeSseFrame('error', JSON.stringify(bodyWithRequestId(asTransportError(error), requestId)));
}
