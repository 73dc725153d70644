/**
 * Renders one planned answer of the mock model on the wire, the way OpenAI does: as a
 * `chat.completion` body, or as `chat.completion.chunk`s for a stream (docs/protocol.md B.3, B.4).
 *
 * A stream is: a first chunk carrying `role` (merged with the first tool-call header when the answer
 * starts with a tool call, as OpenAI does), reasoning and text split into word-sized deltas, each tool
 * call as a header delta (`index`, `id`, `type`, `name`, `arguments: ""`) followed by argument
 * fragments, a finish chunk with an empty delta, and — only when usage was asked for — a usage chunk
 * with `choices: []`, then `data: [DONE]` (`chatRendering`). A scripted stream error cuts the stream
 * after its `after_chunks` content chunks with an `{error}` chunk.
 *
 * @module
 */
import type { AnswerEnvelope, WireRendering } from './answer-with-plan.js';
import { completionUsage, streamPieces, type Completion } from './completion.js';

/** What every chunk of one response shares. */
export interface CompletionEnvelope {
  id: string;
  created: number;
  model: string;
  /** Characters of the request that count towards `prompt_tokens`. */
  promptCharacters: number;
}

/** The `usage` of a chat completion, as OpenAI reports it. */
interface ChatUsage {
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

/** The `usage` object of a Chat Completions answer. */
function chatUsage(completion: Completion, promptCharacters: number): ChatUsage {
  const usage = completionUsage(completion, promptCharacters);
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
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
    usage: chatUsage(completion, envelope.promptCharacters),
  };
}

/** The chunks of a streamed answer (without the `[DONE]` sentinel). */
export function renderCompletionChunks(
  completion: Completion,
  envelope: CompletionEnvelope,
  includeUsage: boolean,
): RenderedStream {
  const pieces = streamPieces(completion);
  const deltas: Record<string, unknown>[] = [
    ...pieces.reasoning.map((piece) => ({ reasoning_content: piece })),
    ...pieces.text.map((piece) => ({ content: piece })),
  ];
  completion.toolCalls.forEach((call, index) => {
    deltas.push({
      tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
    });
    for (const fragment of pieces.arguments[index] ?? []) {
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
    closingChunks.push(chunk([], { usage: chatUsage(completion, envelope.promptCharacters) }));
  return { contentChunks, closingChunks };
}

/** The Chat Completions wire: `chatcmpl-…` answers, streamed as `data:` chunks ending in `[DONE]`. */
export const chatRendering: WireRendering = {
  body: (completion, envelope) => renderCompletionBody(completion, completionEnvelope(envelope)),
  frames(plan, envelope, request) {
    const { contentChunks, closingChunks } = renderCompletionChunks(
      plan.completion,
      completionEnvelope(envelope),
      request.includeUsage,
    );
    const chunks =
      plan.kind === 'stream_error'
        ? [...contentChunks.slice(0, plan.afterChunks), { error: plan.error }]
        : [...contentChunks, ...closingChunks];
    return [...chunks.map((chunk) => JSON.stringify(chunk)), '[DONE]'].map((line) => `data: ${line}\n\n`);
  },
};

function completionEnvelope({
  sequence,
  created,
  model,
  promptCharacters,
}: AnswerEnvelope): CompletionEnvelope {
  return { id: `chatcmpl-mock${sequence}`, created, model, promptCharacters };
}
