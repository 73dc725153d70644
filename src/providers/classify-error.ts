/**
 * Every failure of a request as the `TransportError` its caller hears: the exchange's own end (a cancel,
 * the total deadline), one of the per-attempt deadlines, a body cut short, a refused connection or any
 * other network failure — each with its `MODEL_*` code.
 *
 * @module
 */
import { errors as undiciErrors } from 'undici';
import { TransportError, isTransportError } from '../errors.js';
import type { AttemptContext } from './http-exchange.js';

/** The `MODEL_ETIMEOUT` error for one of the per-attempt deadlines. */
export function deadlineError(
  deadline: 'connect' | 'first-byte' | 'idle',
  context: AttemptContext,
  cause?: unknown,
): TransportError {
  const { provider, deadlines } = context;
  const message =
    deadline === 'connect'
      ? `could not connect to the ${provider} endpoint within ${deadlines.connectTimeoutMs} ms (connect deadline)`
      : deadline === 'first-byte'
        ? `the ${provider} endpoint sent no response headers within ${deadlines.firstByteTimeoutMs} ms (first-byte deadline)`
        : `the ${provider} endpoint went silent for ${deadlines.idleTimeoutMs} ms mid-response (idle deadline)`;
  return new TransportError(
    'MODEL_ETIMEOUT',
    message,
    cause === undefined ? { provider, deadline } : { provider, deadline, cause },
  );
}

/** Maps undici, socket and abort failures to the right `MODEL_*` code. */
export function classifyError(error: unknown, context: AttemptContext): TransportError {
  if (isTransportError(error)) return error;
  if (context.cancellation.aborted) return cancelledError(error, context);
  const provider = context.provider;
  const code = (error as { code?: unknown } | null)?.code;
  const deadline = undiciDeadline(error, code);
  if (deadline !== undefined) return deadlineError(deadline, context, error);
  if (code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
    return new TransportError(
      'MODEL_EPROTO',
      `the ${provider} response body did not match its content-length`,
      { provider, cause: error, retryable: true },
    );
  }
  if (code === 'ECONNREFUSED' || refusedInside(error)) {
    const where = refusedAddress(error) ?? 'the upstream address';
    return new TransportError(
      'MODEL_ETRANSPORT',
      `nothing is listening at ${where} (connection refused, ECONNREFUSED): the ${provider} upstream is not running there, or the base URL names the wrong host or port`,
      { provider, cause: error },
    );
  }
  const detail = error instanceof Error ? error.message : String(error);
  const codeText = typeof code === 'string' ? ` (${code})` : '';
  return new TransportError(
    'MODEL_ETRANSPORT',
    `network failure talking to the ${provider} endpoint: ${detail}${codeText}`,
    { provider, cause: error },
  );
}

/** A failure after the exchange was cancelled: the reason it was cancelled for. */
function cancelledError(error: unknown, context: AttemptContext): TransportError {
  const reason: unknown = context.cancellation.reason;
  if (isTransportError(reason)) return reason;
  return new TransportError('MODEL_EABORTED', 'the exchange was cancelled by the caller', {
    provider: context.provider,
    cause: error,
  });
}

/** Which of undici's own deadlines `error` reports, if any. */
function undiciDeadline(error: unknown, code: unknown): 'connect' | 'first-byte' | 'idle' | undefined {
  if (error instanceof undiciErrors.ConnectTimeoutError || code === 'UND_ERR_CONNECT_TIMEOUT')
    return 'connect';
  if (error instanceof undiciErrors.HeadersTimeoutError || code === 'UND_ERR_HEADERS_TIMEOUT') {
    return 'first-byte';
  }
  if (error instanceof undiciErrors.BodyTimeoutError || code === 'UND_ERR_BODY_TIMEOUT') return 'idle';
  return undefined;
}

/** Whether an aggregate connect failure (every address of a name tried) was refused on each. */
function refusedInside(error: unknown): boolean {
  const errors = (error as { errors?: unknown } | null)?.errors;
  return (
    Array.isArray(errors) &&
    errors.length > 0 &&
    errors.every((inner) => (inner as { code?: unknown } | null)?.code === 'ECONNREFUSED')
  );
}

/** `host:port` of a refused connection, from the error node gives (or the first of an aggregate). */
function refusedAddress(error: unknown): string | undefined {
  const first = refusedInside(error) ? (error as { errors: unknown[] }).errors[0] : error;
  const { address, port } = (first ?? {}) as { address?: unknown; port?: unknown };
  if (typeof address !== 'string') return undefined;
  const host = address.includes(':') ? `[${address}]` : address;
  return typeof port === 'number' ? `${host}:${port}` : host;
}
