/**
 * The options for the upstream call of a shaped request (a mapped model, a capped `max_tokens`).
 *
 * @module
 */
import type { ShapedRequest } from './shape-request.js';
import type { ExchangeOptions } from './types.js';

/**
 * `exchangeOptions` for sending `shaped`: without the caller's body bytes, which no longer say what is
 * sent, and with an `onResponse` that also names the upstream model and output cap.
 */
export function shapedOptions(exchangeOptions: ExchangeOptions, shaped: ShapedRequest): ExchangeOptions {
  if (shaped.upstreamModel === undefined && shaped.upstreamMaxTokens === undefined) return exchangeOptions;
  // The rest, a new object, keeps the symbol-keyed cancellation the proxy hands over.
  const { rawBody: _caller, onResponse, ...rest } = exchangeOptions;
  const options: ExchangeOptions = rest;
  if (onResponse !== undefined) {
    options.onResponse = (info) => {
      const described = { ...info };
      if (shaped.upstreamModel !== undefined) described.upstreamModel = shaped.upstreamModel;
      if (shaped.upstreamMaxTokens !== undefined) described.upstreamMaxTokens = shaped.upstreamMaxTokens;
      onResponse(described);
    };
  }
  return options;
}
