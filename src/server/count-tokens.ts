/**
 * `POST /v1/messages/count_tokens`. On the native path the request goes to Anthropic's own endpoint
 * (the client's bytes, headers and query passed on); on the `tpx` path the server counts where the dialect
 * knows how to ask it (llama.cpp, vLLM), else the transport answers with a local, deliberately
 * conservative estimate (docs/protocol.md D.9); with no credentials it is a 401 like every other exchange.
 *
 * @module
 */
import type { CountTokensRequest, ModelTransport } from '../transport/types.js';
import { proxyError } from './error-response.js';
import type { Exchange } from './exchange.js';
import type { JsonResponse } from './types.js';

/** Answers a count_tokens exchange with `{"input_tokens": n}` (plus any fields Anthropic adds). */
export async function handleCountTokens(
  transport: ModelTransport,
  exchange: Exchange,
): Promise<JsonResponse> {
  const { raw, value } = await exchange.readJsonObject();
  if (transport.countTokens === undefined) {
    throw proxyError(
      404,
      'this transport cannot count tokens: POST /v1/messages/count_tokens is not available',
    );
  }
  // The transport validates the whole request (model, messages, blocks) before counting.
  const count = await transport.countTokens(value as CountTokensRequest, exchange.exchangeOptions(raw));
  exchange.usage = { input_tokens: count.input_tokens };
  return exchange.json(200, JSON.stringify(count));
}
