/**
 * The error for an upstream answer larger than the response limit (`maxResponseBytes`).
 *
 * @module
 */
import { TransportError, type ProviderName } from '../errors.js';

/**
 * `MODEL_ETOOBIG`, as a 502 `api_error`: the upstream's answer is at fault, not the caller's request, so
 * a client must not hear a 413 `request_too_large` that tells it to shrink what it sent.
 */
export function responseTooLarge(provider: ProviderName, message: string): TransportError {
  return new TransportError('MODEL_ETOOBIG', message, { provider, status: 502, type: 'api_error' });
}

/** {@link responseTooLarge} for an answer over `limit` bytes. */
export function bodyTooLarge(limit: number, provider: ProviderName): TransportError {
  return responseTooLarge(
    provider,
    `the ${provider} response is larger than the limit of ${limit} bytes (maxResponseBytes)`,
  );
}
