/**
 * Chat Completions responses (`chat.completion` bodies) as an OpenAI-compatible server sends them back,
 * built deterministically, in the three sizes of the response benchmark:
 *
 * | size   | content                                                        | body      |
 * |--------|----------------------------------------------------------------|-----------|
 * | small  | a short text answer                                            | 954 B     |
 * | medium | reasoning, text, 20 tool calls with ~1 KB of arguments each    | 24 KiB    |
 * | large  | reasoning, text, 200 tool calls with ~4.5 KB of arguments each | 913 KiB   |
 *
 * @module
 */
import type { ConversationSize } from './conversations.js';
import { idOf, seededRandom, words } from './random.js';

const TOOL_CALLS: Record<ConversationSize, number> = { small: 0, medium: 20, large: 200 };
const ARGUMENT_TEXT: Record<ConversationSize, number> = { small: 0, medium: 900, large: 4400 };
const REASONING: Record<ConversationSize, number> = { small: 0, medium: 2000, large: 20_000 };

/** The response of the given size, as a plain JSON value. */
export function completion(size: ConversationSize): Record<string, unknown> {
  const random = seededRandom(101 + TOOL_CALLS[size]);
  const toolCalls = Array.from({ length: TOOL_CALLS[size] }, (_, index) => ({
    id: `call_${idOf(random, 24)}`,
    type: 'function',
    function: {
      name: `tool_${index % 16}`,
      arguments: JSON.stringify({
        path: `src/${idOf(random, 12)}.ts`,
        line: index,
        content: words(random, ARGUMENT_TEXT[size]),
      }),
    },
  }));
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: words(random, size === 'small' ? 500 : 1200),
    refusal: null,
  };
  if (REASONING[size] > 0) message['reasoning_content'] = words(random, REASONING[size]);
  if (toolCalls.length > 0) message['tool_calls'] = toolCalls;
  return {
    id: `chatcmpl-${idOf(random, 24)}`,
    object: 'chat.completion',
    created: 1_767_225_600,
    model: 'bench-upstream-model',
    choices: [
      {
        index: 0,
        message,
        logprobs: null,
        finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
    usage: {
      prompt_tokens: 25_000,
      completion_tokens: 1_800,
      total_tokens: 26_800,
      prompt_tokens_details: { cached_tokens: 20_000 },
      completion_tokens_details: { reasoning_tokens: 600 },
    },
    system_fingerprint: 'fp_bench',
  };
}
