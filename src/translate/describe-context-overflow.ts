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
 * | vLLM, SGLang, OpenAI (no code)      | the message's own words: "maximum context length is N tokens…" with the counts      |
 *
 * When the message says how the request splits into prompt and completion and the prompt alone fits,
 * it is the output reservation (`max_tokens`) that does not: that is said in Anthropic's words for it,
 * "input length and `max_tokens` exceed context limit: I + O > N, decrease input length or `max_tokens`
 * and try again", so that a client lowers `max_tokens` rather than compacting a conversation that fits.
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
  // vLLM before 0.10 answers `{object: "error", message, type, code}`, without an `error` object.
  const message = isObject(error) ? error['message'] : body['message'];
  const stated = typeof message === 'string' ? readStatedCounts(message) : undefined;
  if (stated !== undefined) return describeCounts(stated);
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

/** What a context overflow message states: the window, the prompt, and the completion when it says. */
interface StatedCounts {
  limit: number;
  input: number;
  output?: number;
}

/**
 * The wordings of servers that state the counts in the message only, each with the groups it captures.
 * vLLM: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in
 * the messages, 1000 in the completion)." / "… However, your request has 5000 input tokens." / "'max_tokens'
 * or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and
 * your request has 2778 input tokens (8000 > 4096 - 2778)."; OpenAI: "… However, your messages resulted in
 * 9000 tokens."; SGLang: "… maximum context length of 4096 tokens. You requested a total of 5000 tokens:
 * 4000 tokens from the input messages and 1000 tokens for the completion."
 */
const STATED_COUNTS: readonly { pattern: RegExp; read: (groups: number[]) => StatedCounts }[] = [
  {
    pattern:
      /maximum context length is (\d+) tokens\. However, you requested \d+ tokens \((\d+) in the messages, (\d+) in the completion\)/,
    read: ([limit, input, output]) => ({ limit: limit!, input: input!, output: output! }),
  },
  {
    pattern: /maximum context length is (\d+) tokens and your request has (\d+) input tokens \((\d+) > /,
    read: ([limit, input, output]) => ({ limit: limit!, input: input!, output: output! }),
  },
  {
    pattern:
      /maximum context length of (\d+) tokens\. You requested a total of \d+ tokens: (\d+) tokens from the input messages and (\d+) tokens for the completion/,
    read: ([limit, input, output]) => ({ limit: limit!, input: input!, output: output! }),
  },
  {
    pattern:
      /maximum context length is (\d+) tokens\. However, your (?:request has|messages resulted in) (\d+) (?:input )?tokens/,
    read: ([limit, input]) => ({ limit: limit!, input: input! }),
  },
];

function readStatedCounts(message: string): StatedCounts | undefined {
  for (const { pattern, read } of STATED_COUNTS) {
    const match = pattern.exec(message);
    if (match === null) continue;
    const groups = match.slice(1).map(Number);
    if (groups.every((group) => Number.isSafeInteger(group))) return read(groups);
  }
  return undefined;
}

function describeCounts({ limit, input, output }: StatedCounts): string {
  if (output === undefined || input > limit) return `prompt is too long: ${input} tokens > ${limit} maximum`;
  return `input length and \`max_tokens\` exceed context limit: ${input} + ${output} > ${limit}, decrease input length or \`max_tokens\` and try again`;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
