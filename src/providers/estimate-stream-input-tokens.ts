/**
 * The input-token figure a translated stream opens with.
 *
 * @module
 */
import type { MessagesRequest } from '../protocol/messages.js';
import { estimateInputTokensInSlices } from './estimate-tokens-in-slices.js';
import { loadTokenCounter } from './load-token-counter.js';

/**
 * The `message_start.usage.input_tokens` of a translated stream: the upstream reports its count only at
 * the end, and clients that read only `message_start` (LangChain) would otherwise see 0. The same
 * conservative estimate as `count_tokens`; `message_delta` carries the upstream's own figure. When the
 * tokenizer cannot be loaded the stream still goes on, with 0.
 */
export async function estimateStreamInputTokens(request: MessagesRequest): Promise<number | undefined> {
  try {
    return await estimateInputTokensInSlices(request, await loadTokenCounter());
  } catch {
    return undefined;
  }
}
