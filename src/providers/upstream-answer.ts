/**
 * Reading a provider's answer the same way on both paths: an error status becomes the mapped
 * `TransportError` (its body read within a small limit), and a body that should be JSON but is not
 * becomes `MODEL_EPROTO` with an excerpt a person can recognise.
 *
 * @module
 */
import { TransportError } from '../errors.js';
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
