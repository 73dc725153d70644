/**
 * Reading a provider's answer the same way on every path: an error status becomes the mapped
 * `TransportError` (its body read within a small limit), a body that should be JSON but is not becomes
 * `MODEL_EPROTO` with an excerpt a person can recognise, as does a stream request answered with something
 * other than a stream; and the failures of an optional route that are answers in themselves.
 *
 * @module
 */
import { TransportError, isTransportError } from '../errors.js';
import { JSON_TOO_DEEP, MAX_JSON_DEPTH, scanJsonText } from '../protocol/json-nesting-depth.js';
import { mapUpstreamError, type UpstreamProvider } from '../translate/map-upstream-error.js';
import { readBody, type AttemptContext, type HttpResponse } from './http-exchange.js';
import { parseExactJson } from '../protocol/exact-json.js';

/** Error bodies are read up to this size; the rest is not needed to explain the error. */
export const ERROR_BODY_LIMIT = 64 * 1024;

/** Reads an error answer's body (within `ERROR_BODY_LIMIT`) and maps it to a `TransportError`. */
export async function upstreamError(
  response: HttpResponse,
  context: AttemptContext,
  provider: UpstreamProvider,
): Promise<TransportError> {
  let bodyText = '';
  try {
    bodyText = await readBody(response, context, ERROR_BODY_LIMIT);
  } catch {
    // An error body that cannot be read in full still leaves the status to explain the failure.
  }
  const input: Parameters<typeof mapUpstreamError>[0] = {
    status: response.status,
    bodyText,
    headers: response.headers,
    provider,
  };
  const contentType = response.headers['content-type'];
  if (contentType !== undefined) input.contentType = contentType;
  return mapUpstreamError(input);
}

/** Parses a provider's JSON, or throws `MODEL_EPROTO` naming what it was and how it began. */
export function parseUpstreamJson(text: string, what: string, provider: UpstreamProvider): unknown {
  const flags = scanJsonText(text);
  if ((flags & JSON_TOO_DEEP) !== 0) {
    throw new TransportError(
      'MODEL_EPROTO',
      `the ${provider} ${what} nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`,
      { provider },
    );
  }
  try {
    return parseExactJson(text, flags);
  } catch {
    const excerpt = text.slice(0, 120).replace(/\s+/g, ' ');
    throw new TransportError(
      'MODEL_EPROTO',
      `the ${provider} ${what} is not valid JSON: ${JSON.stringify(excerpt)}`,
      {
        provider,
      },
    );
  }
}

/**
 * The error for a stream request answered with something other than an event stream: `MODEL_EPROTO`
 * naming the content type and quoting the start of the body (none when the body cannot be read).
 */
export async function notAnEventStream(
  response: HttpResponse,
  context: AttemptContext,
  contentType: string,
  provider: UpstreamProvider,
): Promise<TransportError> {
  const text = await readBody(response, context, ERROR_BODY_LIMIT).catch(() => '');
  return new TransportError(
    'MODEL_EPROTO',
    `the ${provider} endpoint answered a stream request with ${contentType || 'no content type'}, not text/event-stream: ${JSON.stringify(text.slice(0, 120))}`,
    { provider },
  );
}

/** Parses JSON that may not be JSON: its value, or `{ message: text }` to quote it. */
export function parseJsonLoose(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { message: text };
  }
}

/**
 * Whether a failure of an optional route (a server's own token count, its model list) is an answer in
 * itself — a refused token, an unreachable server, a deadline — rather than a reason to fall back to
 * what needs no route.
 */
export function isAnswerInItself(error: unknown): boolean {
  return (
    isTransportError(error) &&
    (error.code === 'MODEL_EAUTH' || error.code === 'MODEL_ETRANSPORT' || error.code === 'MODEL_ETIMEOUT')
  );
}
