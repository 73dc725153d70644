/**
 * The `tpx` provider's requests: each carries the OAuth bearer token, and a 401 makes the token source
 * refresh once per exchange (re-read the token file, run the token command) and the request go out again
 * with the new token; a second 401, or a source with nothing new, ends the exchange with `MODEL_EAUTH`
 * (401). Messages never contain a token value.
 *
 * @module
 */
import { TransportError, isTransportError } from '../errors.js';
import { pickResponseHeaders } from '../translate/pick-response-headers.js';
import { explainUpstreamError } from './explain-upstream-error.js';
import { httpRequest, type AttemptContext, type HttpResponse } from './http-exchange.js';
import type { ReportResponse } from './provider.js';
import type { TokenSource } from './token-source.js';
import { upstreamError } from './upstream-answer.js';

/** One request, without its `authorization` header. */
export interface BearerRequestInit {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

/**
 * Sends a JSON body to a URL with the provider's credentials and returns a 2xx answer; any other status
 * is thrown as the mapped upstream error (explained with `model`, the model sent, when given).
 */
export type PostJson = (
  url: string,
  body: string,
  streaming: boolean,
  model?: string,
) => Promise<HttpResponse>;

/**
 * Sends one request with the current token. On a 401 the token source refreshes (once per exchange: the
 * exchange's cancellation identifies it) and the request goes out again with the new token. Every answer
 * is reported.
 *
 * @throws TransportError `MODEL_EAUTH` (401) when the upstream refused the token and there is no new one.
 */
export async function sendWithBearer(
  tokens: TokenSource,
  url: string,
  init: BearerRequestInit,
  context: AttemptContext,
  report: ReportResponse,
): Promise<HttpResponse> {
  const exchange = context.cancellation;
  let token = await tokens.token(exchange);
  for (let sent = 1; ; sent++) {
    const headers = { ...init.headers, authorization: `Bearer ${token}` };
    const response = await httpRequest(url, { ...init, headers }, context);
    report(response.status, pickResponseHeaders(response.headers));
    if (response.status !== 401) return response;
    const refused = await upstreamError(response, context, 'tpx');
    const fresh = sent === 1 ? await refreshAfterRefusal(tokens, token, context) : undefined;
    if (fresh === undefined) throw refusedToken(tokens, refused, sent);
    token = fresh;
  }
}

/** The token to retry with after `rejected` was refused, or `undefined` when the source has none. */
async function refreshAfterRefusal(
  tokens: TokenSource,
  rejected: string,
  context: AttemptContext,
): Promise<string | undefined> {
  const exchange = context.cancellation;
  try {
    return await tokens.refresh(exchange, rejected, exchange.signal);
  } catch (error) {
    // A refresh cut short by the exchange's end fails as the exchange did (cancelled, or out of time).
    if (exchange.aborted && isTransportError(exchange.reason)) throw exchange.reason;
    throw error;
  }
}

function refusedToken(tokens: TokenSource, refused: TransportError, sent: number): TransportError {
  const retried = sent > 1 ? ', also after the token was refreshed' : '';
  return new TransportError(
    'MODEL_EAUTH',
    tokens.redact(
      `the tpx endpoint refused the bearer token from ${tokens.origin}${retried}: ${refused.message}`,
    ),
    {
      status: 401,
      type: 'authentication_error',
      provider: 'tpx',
      headers: { ...refused.headers },
      ...(refused.requestId === undefined ? {} : { requestId: refused.requestId }),
    },
  );
}

/** Sends one request of an attempt with the bearer token, as {@link sendWithBearer} does. */
export type BearerSend = (url: string, init: BearerRequestInit) => Promise<HttpResponse>;

/** {@link sendWithBearer} for the requests of one attempt. */
export function bearerSender(
  tokens: TokenSource,
  context: AttemptContext,
  report: ReportResponse,
): BearerSend {
  return (url, init) => sendWithBearer(tokens, url, init, context, report);
}

/** A POST of JSON with the bearer token, for either wire; an error status is thrown, mapped and explained. */
export function bearerPoster(send: BearerSend, context: AttemptContext): PostJson {
  return async (url, body, streaming, model) => {
    const headers = {
      'content-type': 'application/json',
      accept: streaming ? 'text/event-stream' : 'application/json',
    };
    const response = await send(url, { method: 'POST', headers, body });
    if (response.status < 200 || response.status > 299) {
      const error = await upstreamError(response, context, 'tpx');
      throw explainUpstreamError(error, {
        method: 'POST',
        url,
        ...(model === undefined ? {} : { model }),
        baseUrlVariable: 'TPX_BASE_URL',
      });
    }
    return response;
  };
}
