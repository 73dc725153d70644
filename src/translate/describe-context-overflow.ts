/**
 * Recognises an upstream's "the prompt does not fit the context" error and says it the way Anthropic
 * does, "prompt is too long: N tokens > M maximum". Clients act on those words: Claude Code looks for
 * "prompt is too long" in an error's message (whatever its status or type) and compacts the
 * conversation, where any other wording stops the session with an API error. Pure.
 *
 * | upstream                            | recognised by                                                                       |
 * |-------------------------------------|-------------------------------------------------------------------------------------|
 * | llama.cpp (`/v1/chat/completions`, `/v1/messages`) | `error.type` `exceed_context_size_error`, with `n_prompt_tokens` and `n_ctx` |
 * | OpenAI and servers that copy it     | `error.code` `context_length_exceeded`                                              |
 *
 * @module
 */
import { isObject } from '../protocol/is-object.js';

/**
 * The words to put before the upstream's own message when `body` is a context overflow, e.g.
 * `prompt is too long: 559 tokens > 256 maximum` (llama.cpp states both numbers) or `prompt is too long`
 * (when the upstream states none); `undefined` for any other body.
 *
 * @example
 * describeContextOverflow({ error: { type: 'exceed_context_size_error', n_prompt_tokens: 559, n_ctx: 256 } })
 * // → 'prompt is too long: 559 tokens > 256 maximum'
 */
export function describeContextOverflow(body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  const error = body['error'];
  if (!isObject(error)) return undefined;
  const isOverflow =
    error['type'] === 'exceed_context_size_error' || error['code'] === 'context_length_exceeded';
  if (!isOverflow) return undefined;
  const promptTokens = error['n_prompt_tokens'];
  const contextSize = error['n_ctx'];
  if (isCount(promptTokens) && isCount(contextSize)) {
    return `prompt is too long: ${promptTokens} tokens > ${contextSize} maximum`;
  }
  return 'prompt is too long';
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
