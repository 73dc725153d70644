/**
 * Asking the server to count a request's input tokens, where it can: the request bodies and the readers
 * of the answers. Pure: the provider does the I/O.
 *
 * | dialect's `tokenCounting` | requests                                                                  | count |
 * |---------------------------|---------------------------------------------------------------------------|-------|
 * | `llamacpp`                | `POST {root}/apply-template` with the Chat Completions body tpx would send → `{prompt}`; then `POST {root}/tokenize` `{content: prompt, add_special: true, parse_special: true}` → `{tokens}` | `tokens.length` |
 * | `vllm`                    | `POST {root}/tokenize` `{model, messages, tools?, add_generation_prompt: true}` → `{count}` | `count` |
 * | `estimate`                | none: the local estimate                                                  | — |
 *
 * `{root}` is the base URL without a trailing `/v1`: both servers serve these routes at the root. The
 * body counted is the one tpx would send — dialect applied, system messages folded — so the count is of
 * the prompt the server will really see. (llama.cpp's own `/v1/messages/count_tokens` counts the caller's
 * Messages body instead: with system messages after the first it is refused by the same strict chat
 * templates the fold exists for.)
 *
 * @module
 */
import type { ChatCompletionRequest } from '../protocol/chat-completions.js';
import { isObject } from '../protocol/is-object.js';

/** The server root for a base URL: `http://host:8080/v1` → `http://host:8080`. */
export function serverRootUrl(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** The body of llama.cpp's `/apply-template`: the Chat Completions request as tpx would send it. */
export function applyTemplateBody(body: ChatCompletionRequest): Record<string, unknown> {
  const { stream: _stream, stream_options: _streamOptions, ...rest } = body;
  return rest;
}

/** The prompt in llama.cpp's `/apply-template` answer, or `undefined` when there is none. */
export function readTemplatedPrompt(payload: unknown): string | undefined {
  const prompt = isObject(payload) ? payload['prompt'] : undefined;
  return typeof prompt === 'string' ? prompt : undefined;
}

/** The body of llama.cpp's `/tokenize` for a templated prompt (special tokens as the server parses them). */
export function llamaCppTokenizeBody(prompt: string): Record<string, unknown> {
  return { content: prompt, add_special: true, parse_special: true };
}

/** The number of tokens in llama.cpp's `/tokenize` answer (`{"tokens": [...]}`), or `undefined`. */
export function readTokenListLength(payload: unknown): number | undefined {
  const tokens = isObject(payload) ? payload['tokens'] : undefined;
  return Array.isArray(tokens) ? tokens.length : undefined;
}

/** The body of vLLM's `/tokenize` for a chat request: the messages and tools, as the chat template sees them. */
export function vllmTokenizeBody(body: ChatCompletionRequest): Record<string, unknown> {
  return {
    model: body.model,
    messages: body.messages,
    ...(body.tools !== undefined ? { tools: body.tools } : {}),
    add_generation_prompt: true,
  };
}

/** The `count` in vLLM's `/tokenize` answer, or `undefined` when it is not a count. */
export function readVllmTokenCount(payload: unknown): number | undefined {
  const count = isObject(payload) ? payload['count'] : undefined;
  return typeof count === 'number' && Number.isInteger(count) && count >= 0 ? count : undefined;
}
