/**
 * Keeps the start-up credentials out of every error a provider raises. Upstreams echo credentials in
 * their error text ("Incorrect API key provided: sk-…", a proxy's HTML page quoting the request, an
 * unparseable body quoted in a `MODEL_EPROTO` message), and from there they would reach the caller, the
 * proxy's client, its log and `tpx doctor`. Every error leaving a provider is rewritten with each
 * credential replaced by `[redacted]`; a `cause` that holds one is dropped.
 *
 * @module
 */
import { inspect } from 'node:util';
import { TransportError, isTransportError } from '../errors.js';
import type { Provider } from '../providers/provider.js';

/** Replaces every secret in a text. */
export type Redact = (text: string) => string;

/** Shorter values are not replaced: they would match ordinary text (and are no credential). */
const MIN_SECRET_LENGTH = 6;

/** A `Redact` for fixed values. */
export function redactValues(values: readonly string[]): Redact {
  const secrets = values.filter((value) => value.length >= MIN_SECRET_LENGTH);
  return (text) => {
    let result = text;
    for (const secret of secrets)
      if (result.includes(secret)) result = result.split(secret).join('[redacted]');
    return result;
  };
}

function holdsSecret(value: unknown, redact: Redact): boolean {
  if (value === undefined) return false;
  const text = inspect(value, { depth: 6 });
  return redact(text) !== text;
}

/** `error` with every secret removed: itself when it held none. */
export function redactError(error: unknown, redact: Redact): unknown {
  if (!isTransportError(error)) return holdsSecret(error, redact) ? new Error(redact(String(error))) : error;
  const message = redact(error.message);
  const causeHoldsSecret = holdsSecret(error.cause, redact);
  if (message === error.message && !causeHoldsSecret) return error;
  return new TransportError(error.code, message, {
    status: error.status,
    type: error.body.error.type,
    retryable: error.retryable,
    headers: { ...error.headers },
    ...(causeHoldsSecret ? {} : { cause: error.cause }),
    ...(error.provider === undefined ? {} : { provider: error.provider }),
    ...(error.requestId === undefined ? {} : { requestId: error.requestId }),
    ...(error.deadline === undefined ? {} : { deadline: error.deadline }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
  });
}

/** `provider`, with every error it raises (or throws from a stream) passed through `redactError`. */
export function withRedactedErrors(provider: Provider, redact: Redact): Provider {
  const redacted: Provider = {
    name: provider.name,
    send: (...args) =>
      provider.send(...args).catch((error: unknown) => {
        throw redactError(error, redact);
      }),
    async *stream(...args) {
      try {
        // Batches pass through as they are: this layer costs one step per chunk, not per event.
        yield* provider.stream(...args);
      } catch (error) {
        throw redactError(error, redact);
      }
    },
  };
  const countTokens = provider.countTokens?.bind(provider);
  if (countTokens !== undefined) {
    redacted.countTokens = (...args) =>
      countTokens(...args).catch((error: unknown) => {
        throw redactError(error, redact);
      });
  }
  const listModels = provider.listModels?.bind(provider);
  if (listModels !== undefined) {
    redacted.listModels = (...args) =>
      listModels(...args).catch((error: unknown) => {
        throw redactError(error, redact);
      });
  }
  const inspect = provider.inspect?.bind(provider);
  if (inspect !== undefined) {
    redacted.inspect = (...args) =>
      inspect(...args).catch((error: unknown) => {
        throw redactError(error, redact);
      });
  }
  return redacted;
}
