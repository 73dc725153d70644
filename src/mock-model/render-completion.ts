/**
 * Renders one planned answer of the mock model on the wire, the way OpenAI does: as a
 * `chat.completion` body, or as `chat.completion.chunk`s for a stream (PROTOCOLS.md B.3, B.4).
 *
 * A stream is: a first chunk carrying `role` (merged with the first tool-call header when the answer
 * starts with a tool call, as OpenAI does), reasoning and text split into word-sized deltas, each tool
 * call as a header delta (`index`, `id`, `type`, `name`, `arguments: ""`) followed by argument
 * fragments, a finish chunk with an empty delta, and — only when usage was asked for — a usage chunk
 * with `choices: []`. The caller adds `data: [DONE]`.
 *
 * @module
 */

/** A tool call the mock will send; `arguments` is the exact string put on the wire. */
export interface CompletionToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One answer, independent of how it is sent. */
export interface Completion {
  reasoning: string | null;
  text: string | null;
  toolCalls: readonly CompletionToolCall[];
  /** `null` for an answer that never finishes (a scripted stream error cuts it short). */
  finishReason: string | null;
}

/** What every chunk of one response shares. */
export interface CompletionEnvelope {
  id: string;
  created: number;
  model: string;
  /** Characters of the request that count towards `prompt_tokens`. */
  promptCharacters: number;
}

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

/** The chunks of a stream, split where a scripted stream error may cut in. */
export interface RenderedStream {
  /** The role chunk and every content delta, in order. */
  contentChunks: Record<string, unknown>[];
  /** The finish chunk, then the usage chunk when asked for. */
  closingChunks: Record<string, unknown>[];
}

/** Longest argument fragment, in code points. Short enough that every real call arrives in pieces. */
const ARGUMENT_FRAGMENT_LENGTH = 8;

/** A rough token count: one token per four characters, as the usual rule of thumb has it. */
export function estimateTokens(characters: number): number {
  return Math.ceil(characters / 4);
}

/** Deterministic usage numbers for `completion` answering a request of `promptCharacters` characters. */
export function completionUsage(completion: Completion, promptCharacters: number): ChatUsage {
  const reasoningTokens = estimateTokens(completion.reasoning?.length ?? 0);
  let outputCharacters = completion.text?.length ?? 0;
  for (const call of completion.toolCalls) outputCharacters += call.name.length + call.arguments.length;
  const promptTokens = estimateTokens(promptCharacters);
  const completionTokens = estimateTokens(outputCharacters) + reasoningTokens;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: reasoningTokens },
  };
}

/** The non-streaming `chat.completion` body. */
export function renderCompletionBody(
  completion: Completion,
  envelope: CompletionEnvelope,
): Record<string, unknown> {
  const message: Record<string, unknown> = {
    role: 'assistant',
    // OpenAI sends `content: null` when the answer is tool calls only.
    content: completion.text ?? (completion.toolCalls.length > 0 ? null : ''),
    refusal: null,
  };
  if (completion.reasoning !== null) message['reasoning_content'] = completion.reasoning;
  if (completion.toolCalls.length > 0) {
    message['tool_calls'] = completion.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return {
    id: envelope.id,
    object: 'chat.completion',
    created: envelope.created,
    model: envelope.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: completion.finishReason ?? 'stop' }],
    usage: completionUsage(completion, envelope.promptCharacters),
  };
}

/** The chunks of a streamed answer (without the `[DONE]` sentinel). */
export function renderCompletionChunks(
  completion: Completion,
  envelope: CompletionEnvelope,
  includeUsage: boolean,
): RenderedStream {
  const deltas: Record<string, unknown>[] = [];
  if (completion.reasoning !== null) {
    for (const piece of splitWords(completion.reasoning)) deltas.push({ reasoning_content: piece });
  }
  if (completion.text !== null)
    for (const piece of splitWords(completion.text)) deltas.push({ content: piece });
  completion.toolCalls.forEach((call, index) => {
    deltas.push({
      tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
    });
    for (const fragment of splitFragments(call.arguments, ARGUMENT_FRAGMENT_LENGTH)) {
      deltas.push({ tool_calls: [{ index, function: { arguments: fragment } }] });
    }
  });
  const first = deltas[0];
  if (first !== undefined && 'tool_calls' in first)
    deltas[0] = { role: 'assistant', content: null, ...first };
  else deltas.unshift({ role: 'assistant', content: '' });

  // With `include_usage`, OpenAI puts `usage: null` on every chunk but the last.
  const usageField = includeUsage ? { usage: null } : {};
  const chunk = (
    choices: unknown[],
    extra: Record<string, unknown> = usageField,
  ): Record<string, unknown> => ({
    id: envelope.id,
    object: 'chat.completion.chunk',
    created: envelope.created,
    model: envelope.model,
    choices,
    ...extra,
  });
  const contentChunks = deltas.map((delta) =>
    chunk([{ index: 0, delta, logprobs: null, finish_reason: null }]),
  );
  const closingChunks: Record<string, unknown>[] = [];
  if (completion.finishReason !== null) {
    closingChunks.push(
      chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: completion.finishReason }]),
    );
  }
  if (includeUsage)
    closingChunks.push(chunk([], { usage: completionUsage(completion, envelope.promptCharacters) }));
  return { contentChunks, closingChunks };
}

/**
 * Splits text into word-sized pieces that concatenate back to it exactly; leading whitespace sticks to
 * the word after it, as tokenizers tend to do.
 *
 * @example
 * splitWords('Hello  big world\n') // → ['Hello', '  big', ' world', '\n']
 */
export function splitWords(text: string): string[] {
  return text.match(/\s*\S+|\s+$/g) ?? [];
}

/** Splits `text` into pieces of at most `length` code points, never inside a surrogate pair. */
export function splitFragments(text: string, length: number): string[] {
  const codePoints = Array.from(text);
  const fragments: string[] = [];
  for (let start = 0; start < codePoints.length; start += length) {
    fragments.push(codePoints.slice(start, start + length).join(''));
  }
  return fragments;
}
