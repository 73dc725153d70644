/**
 * Chat Completions answers for scripted upstreams: one assistant message, answered whole (JSON) or
 * streamed (a role chunk, the content a few characters a chunk, each tool call in a chunk of its own,
 * then the finish reason with the usage), so a test states the message once and gets both forms.
 *
 * @module
 */
import { openAiSse, step, type Step } from './scripted-server.js';

/** A tool call as the upstream writes it (`id` left out for a server that sends none). */
export interface ChatToolCall {
  id?: string;
  name: string;
  arguments: string;
}

/** The assistant message of a scripted answer. */
export interface ChatAnswer {
  content?: string | null;
  toolCalls?: readonly ChatToolCall[];
  /** @default `tool_calls` with calls, else `stop` */
  finishReason?: string;
  /** @default 'chatcmpl-1' */
  id?: string;
  /** How many characters of the content go in one chunk of a stream. @default 3 */
  chunkLength?: number;
}

const USAGE = { prompt_tokens: 9, completion_tokens: 7, total_tokens: 16 };

/** The answer as a step: JSON, or with `streaming` a Chat Completions stream. */
export function chatAnswer(answer: ChatAnswer, streaming: boolean): Step {
  const id = answer.id ?? 'chatcmpl-1';
  const calls = (answer.toolCalls ?? []).map((call, index) => ({
    index,
    ...(call.id === undefined ? {} : { id: call.id }),
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }));
  const finishReason = answer.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop');
  const content = answer.content ?? null;
  if (!streaming) {
    const message = { role: 'assistant', content, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
    return step.json({
      id,
      object: 'chat.completion',
      model: 'served',
      choices: [{ index: 0, message, finish_reason: finishReason }],
      usage: USAGE,
    });
  }
  const chunk = (delta: unknown, finish: string | null) => ({
    id,
    object: 'chat.completion.chunk',
    model: 'served',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const pieces = content?.match(new RegExp(`[\\s\\S]{1,${answer.chunkLength ?? 3}}`, 'g')) ?? [];
  return step.sse(
    openAiSse([
      chunk({ role: 'assistant', content: content === null ? null : '' }, null),
      ...pieces.map((piece) => chunk({ content: piece }, null)),
      ...calls.map((call) => chunk({ tool_calls: [call] }, null)),
      { ...chunk({}, finishReason), usage: USAGE },
    ]),
  );
}
