/**
 * `count_tokens` on the `tpx` provider: the server's own count of the prompt tpx would send, where the
 * dialect has a way to ask (`server-token-count.ts`), else — and when the server cannot answer — the
 * local, deliberately conservative estimate.
 *
 * @module
 */
import type { MessagesRequest } from '../protocol/messages.js';
import { stringifyExactJson } from '../protocol/exact-json.js';
import {
  applyTemplateBody,
  llamaCppTokenizeBody,
  readTemplatedPrompt,
  readTokenListLength,
  readVllmTokenCount,
  serverRootUrl,
  vllmTokenizeBody,
} from '../translate/server-token-count.js';
import { estimateInputTokensInSlices } from './estimate-tokens-in-slices.js';
import type { CountTokensRequest, TokenCount } from './exchange-types.js';
import { readBody, type AttemptContext } from './http-exchange.js';
import { loadTokenCounter } from './load-token-counter.js';
import type { BearerSend } from './send-with-bearer.js';
import { chatRequest, type ChatWireConfig } from './tpx-chat-wire.js';
import { ERROR_BODY_LIMIT, isAnswerInItself, parseJsonLoose } from './upstream-answer.js';

/** Counts the input tokens of `request`: on the server when the dialect can, else estimated. */
export async function countTpxTokens(
  request: CountTokensRequest,
  config: ChatWireConfig,
  send: BearerSend,
  context: AttemptContext,
): Promise<TokenCount> {
  if (config.dialect.tokenCounting !== 'estimate') {
    const counted = await countOnServer(request, config, send, context);
    if (counted !== undefined) return { input_tokens: counted };
  }
  // Most OpenAI-compatible servers have no counting endpoint (docs/protocol.md D.9).
  const countText = await loadTokenCounter();
  // Counted in slices with the loop given back in between: one request must not freeze the others.
  return { input_tokens: await estimateInputTokensInSlices(request, countText) };
}

/**
 * The server's own count of the prompt tpx would send for `request` (see `server-token-count.ts`), or
 * `undefined` when the server has no such route or answers something else: the caller then estimates.
 * A refused token, an unreachable server or a deadline is an answer in itself and is thrown.
 */
async function countOnServer(
  request: CountTokensRequest,
  config: ChatWireConfig,
  send: BearerSend,
  context: AttemptContext,
): Promise<number | undefined> {
  // count_tokens requests carry no max_tokens; the translator needs one, and it changes no prompt token.
  const { body } = chatRequest({ ...request, max_tokens: 1 } as MessagesRequest, config, false);
  const root = serverRootUrl(config.baseUrl);
  const postForCount = (path: string, payload: Record<string, unknown>) =>
    postCountRoute(`${root}${path}`, payload, send, context);
  try {
    if (config.dialect.tokenCounting === 'vllm') {
      return readVllmTokenCount(await postForCount('/tokenize', vllmTokenizeBody(body)));
    }
    const prompt = readTemplatedPrompt(await postForCount('/apply-template', applyTemplateBody(body)));
    if (prompt === undefined) return undefined;
    return readTokenListLength(await postForCount('/tokenize', llamaCppTokenizeBody(prompt)));
  } catch (error) {
    if (context.cancellation.aborted || isAnswerInItself(error)) throw error;
    return undefined;
  }
}

/** POSTs JSON to a counting route; the parsed answer, or `undefined` when the route gave none. */
async function postCountRoute(
  url: string,
  body: Record<string, unknown>,
  send: BearerSend,
  context: AttemptContext,
): Promise<unknown> {
  const headers = { 'content-type': 'application/json', accept: 'application/json' };
  const response = await send(url, { method: 'POST', headers, body: stringifyExactJson(body) });
  if (response.status < 200 || response.status > 299) {
    response.body.destroy();
    return undefined;
  }
  return parseJsonLoose(await readBody(response, context, ERROR_BODY_LIMIT * 16));
}
