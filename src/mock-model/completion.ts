/**
 * One answer of the mock model, whichever wire asked: what it says (reasoning, text, tool calls) and how
 * it finishes, its deterministic token counts, and how a stream splits it into pieces. The wire renderers
 * (`render-completion.ts` for Chat Completions, `render-response.ts` for the Responses API) put it in
 * their shapes.
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
  /** The token counts to report instead of the estimate (a replayed answer reports the recorded ones). */
  usage?: CompletionUsage;
}

/** The token counts of one answer. */
export interface CompletionUsage {
  inputTokens: number;
  /** Reasoning included. */
  outputTokens: number;
  reasoningTokens: number;
}

/** Longest argument fragment, in code points. Short enough that every real call arrives in pieces. */
const ARGUMENT_FRAGMENT_LENGTH = 8;

/** A rough token count: one token per four characters, as the usual rule of thumb has it. */
export function estimateTokens(characters: number): number {
  return Math.ceil(characters / 4);
}

/** Deterministic token counts for `completion` answering a request of `promptCharacters` characters. */
export function completionUsage(completion: Completion, promptCharacters: number): CompletionUsage {
  if (completion.usage !== undefined) return completion.usage;
  const reasoningTokens = estimateTokens(completion.reasoning?.length ?? 0);
  let outputCharacters = completion.text?.length ?? 0;
  for (const call of completion.toolCalls) outputCharacters += call.name.length + call.arguments.length;
  return {
    inputTokens: estimateTokens(promptCharacters),
    outputTokens: estimateTokens(outputCharacters) + reasoningTokens,
    reasoningTokens,
  };
}

/** How a stream sends an answer: reasoning and text in word-sized pieces, each call's arguments in fragments. */
export interface StreamPieces {
  reasoning: string[];
  text: string[];
  /** Per tool call, in order. */
  arguments: string[][];
}

/** The pieces a stream sends `completion` in (see {@link splitWords}, {@link splitFragments}). */
export function streamPieces(completion: Completion): StreamPieces {
  return {
    reasoning: splitWords(completion.reasoning ?? ''),
    text: splitWords(completion.text ?? ''),
    arguments: completion.toolCalls.map((call) => splitFragments(call.arguments, ARGUMENT_FRAGMENT_LENGTH)),
  };
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
