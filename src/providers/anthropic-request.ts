/**
 * The requests of the `anthropic` provider: the URL under the base URL (with the caller's query string),
 * the key and version headers (the caller's `anthropic-version` and `anthropic-beta` passed on), the
 * body as the caller wrote it where it can go out unchanged, and the status of every answer reported and,
 * when it is an error, thrown as the mapped error.
 *
 * @module
 */
import { TransportError } from '../errors.js';
import { stringifyExactJson } from '../protocol/exact-json.js';
import type { MessagesRequest } from '../protocol/messages.js';
import { pickResponseHeaders } from '../translate/pick-response-headers.js';
import type { ExchangeOptions } from './exchange-types.js';
import { explainUpstreamError } from './explain-upstream-error.js';
import { httpRequest, type AttemptContext, type HttpResponse } from './http-exchange.js';
import type { ReportResponse } from './provider.js';
import { upstreamError } from './upstream-answer.js';

const DEFAULT_VERSION = '2023-06-01';

/** The key and the API's base URL. */
export interface AnthropicConfig {
  apiKey: string;
  baseUrl: string;
  /**
   * Betas left out of the caller's `anthropic-beta` (`TPX_DROP_BETAS`), for Messages-compatible
   * upstreams that refuse a request naming one they do not know. @default none: the header passes as sent
   */
  dropBetas?: readonly string[] | undefined;
}

function headerValue(value: string | string[] | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  const joined = Array.isArray(value) ? value.join(',') : value;
  if (/[\r\n\0]/.test(joined)) {
    throw new TransportError('MODEL_EINVAL', `the ${name} header contains a line break or NUL character`);
  }
  return joined.trim() === '' ? undefined : joined;
}

function callerHeader(options: ExchangeOptions, name: string): string | undefined {
  const headers = options.headers;
  if (headers === undefined) return undefined;
  for (const key in headers) if (key.toLowerCase() === name) return headerValue(headers[key], name);
  return undefined;
}

/** `{base}{path}`, with the caller's query string. @throws TransportError `MODEL_EINVAL` for a query with whitespace or `#`. */
export function anthropicUrl(baseUrl: string, query: string | undefined, path = '/v1/messages'): string {
  if (query === undefined || query === '') return `${baseUrl}${path}`;
  if (/[\s#]/.test(query))
    throw new TransportError('MODEL_EINVAL', 'the query string contains whitespace or "#"');
  return `${baseUrl}${path}?${query.replace(/^\?/, '')}`;
}

/** The headers of a request: JSON, the key, and the caller's version and beta headers. */
export function anthropicHeaders(
  config: AnthropicConfig,
  options: ExchangeOptions,
  streaming: boolean,
): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: streaming ? 'text/event-stream' : 'application/json',
    'x-api-key': config.apiKey,
    'anthropic-version': callerHeader(options, 'anthropic-version') ?? DEFAULT_VERSION,
  };
  const beta = withoutDroppedBetas(callerHeader(options, 'anthropic-beta'), config.dropBetas);
  if (beta !== undefined) headers['anthropic-beta'] = beta;
  return headers;
}

/**
 * The header value without the betas in `drops`; unchanged when there is nothing to drop, and
 * `undefined` when nothing is left (an empty header would name an empty beta).
 */
function withoutDroppedBetas(
  value: string | undefined,
  drops: readonly string[] | undefined,
): string | undefined {
  if (value === undefined || drops === undefined || drops.length === 0) return value;
  const betas = value.split(',').map((beta) => beta.trim());
  if (!betas.some((beta) => drops.includes(beta))) return value;
  const kept = betas.filter((beta) => beta !== '' && !drops.includes(beta));
  return kept.length === 0 ? undefined : kept.join(',');
}

/** The body of a Messages request: the caller's own bytes when they already say what is about to be done. */
function messagesBody(
  request: MessagesRequest,
  options: ExchangeOptions,
  streaming: boolean,
): string | Uint8Array {
  if (options.rawBody !== undefined && (request.stream === true) === streaming) return options.rawBody;
  if ((request.stream === true) === streaming) return stringifyExactJson(request);
  return stringifyExactJson({ ...request, stream: streaming });
}

/** Sends one request and reports the status and headers of its answer. */
export async function sendReported(
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string | Uint8Array },
  context: AttemptContext,
  report: ReportResponse,
): Promise<HttpResponse> {
  const response = await httpRequest(url, init, context);
  report(response.status, pickResponseHeaders(response.headers));
  return response;
}

/**
 * Throws an error answer as the mapped upstream error; for a call that carried a model, explained (which
 * fix a 404 needs).
 */
export async function failOnStatus(
  response: HttpResponse,
  context: AttemptContext,
  call?: { url: string; model: string },
): Promise<never> {
  const error = await upstreamError(response, context, 'anthropic');
  if (call === undefined) throw error;
  throw explainUpstreamError(error, {
    method: 'POST',
    ...call,
    baseUrlVariable: 'ANTHROPIC_BASE_URL',
    routesAddV1: true,
  });
}

/** POSTs a Messages request, for a message or a stream; a 2xx answer, any other status thrown. */
export async function postMessages(
  config: AnthropicConfig,
  request: MessagesRequest,
  options: ExchangeOptions,
  streaming: boolean,
  context: AttemptContext,
  report: ReportResponse,
): Promise<HttpResponse> {
  const url = anthropicUrl(config.baseUrl, options.query);
  const headers = anthropicHeaders(config, options, streaming);
  const body = messagesBody(request, options, streaming);
  const response = await sendReported(url, { method: 'POST', headers, body }, context, report);
  if (response.status < 200 || response.status > 299)
    await failOnStatus(response, context, { url, model: request.model });
  return response;
}
