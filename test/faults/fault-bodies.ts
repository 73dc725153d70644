/**
 * Upstream answers for the fault suite, one builder per shape, for both wire protocols: Anthropic
 * Messages (JSON message, named SSE events) and OpenAI Chat Completions (JSON completion, data-only
 * chunks ending in `[DONE]`). Every fault in `fault-modes.ts` is built from these, so that a fault
 * differs from a good answer in exactly one way.
 *
 * @module
 */
import { anthropicSse, openAiSse } from '../helpers/scripted-server.js';

/** The two providers with an upstream. */
export type UpstreamKind = 'anthropic' | 'tpx';

/** The text every well-formed answer carries. */
export const ANSWER_TEXT = 'Hi there';

/** The one tool every request offers, so that tool calls map back to a known name. */
export const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

/** The request every fault case sends (with `stream` set per entry point). */
export function faultRequest(model = 'claude-test') {
  return {
    model,
    max_tokens: 64,
    messages: [{ role: 'user' as const, content: 'Hello' }],
    tools: [WEATHER_TOOL],
  };
}

// ---------------------------------------------------------------------------------------------------
// Anthropic Messages

/** A complete message whose content is `blocks` (one text block by default). */
export function anthropicMessage(
  blocks: readonly unknown[] = [{ type: 'text', text: ANSWER_TEXT }],
  stopReason = 'end_turn',
) {
  return {
    id: 'msg_01Fault',
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content: blocks,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 9, output_tokens: 3 },
  };
}

/** A tool_use block. `id` or `name` may be `undefined` to leave the field out. */
export function anthropicToolUse(
  id: string | undefined,
  name: string | undefined,
  input: unknown = { city: 'Paris' },
) {
  const block: Record<string, unknown> = { type: 'tool_use' };
  if (id !== undefined) block['id'] = id;
  if (name !== undefined) block['name'] = name;
  block['input'] = input;
  return block;
}

/** `message_start`, with an empty message. */
export function anthropicStart() {
  return {
    type: 'message_start',
    message: { ...anthropicMessage([]), stop_reason: null, usage: { input_tokens: 9, output_tokens: 1 } },
  };
}

/** The events of a text block at `index`, split into `parts`. */
export function anthropicTextBlock(index: number, parts: readonly string[] = ['Hi', ' there']) {
  return [
    { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
    ...parts.map((text) => ({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } })),
    { type: 'content_block_stop', index },
  ];
}

/** The events of a tool_use block at `index`, its input in `fragments`. */
export function anthropicToolBlock(
  index: number,
  id: string | undefined,
  name: string | undefined,
  fragments: readonly string[] = ['{"city":', '"Paris"}'],
) {
  return [
    { type: 'content_block_start', index, content_block: anthropicToolUse(id, name, {}) },
    ...fragments.map((partial_json) => ({
      type: 'content_block_delta',
      index,
      delta: { type: 'input_json_delta', partial_json },
    })),
    { type: 'content_block_stop', index },
  ];
}

/** `message_delta` and `message_stop`. */
export function anthropicEnd(stopReason = 'end_turn') {
  return [
    {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 3 },
    },
    { type: 'message_stop' },
  ];
}

/** A whole, well-formed text stream, as events. */
export function anthropicTextEvents(parts: readonly string[] = ['Hi', ' there']) {
  return [anthropicStart(), ...anthropicTextBlock(0, parts), ...anthropicEnd()];
}

/** SSE frames for Anthropic events (`event:` and `data:` lines, blank line). */
export function anthropicFrames(events: readonly { type: string }[]): string[] {
  return anthropicSse(events);
}

/** A Messages error body. */
export function anthropicError(type: string, message: string) {
  return { type: 'error', error: { type, message }, request_id: 'req_fault_upstream' };
}

// ---------------------------------------------------------------------------------------------------
// OpenAI Chat Completions

/** A complete chat completion with `message` as its only choice. */
export function openAiCompletion(
  message: Record<string, unknown> = { role: 'assistant', content: ANSWER_TEXT },
  finishReason = 'stop',
) {
  return {
    id: 'chatcmpl-fault',
    object: 'chat.completion',
    created: 1_767_225_600,
    model: 'gpt-test',
    choices: [{ index: 0, message, finish_reason: finishReason }],
    usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
  };
}

/** One streaming chunk carrying `delta` (and a finish reason when given). */
export function openAiChunk(delta: Record<string, unknown>, finishReason: string | null = null) {
  return {
    id: 'chatcmpl-fault',
    object: 'chat.completion.chunk',
    created: 1_767_225_600,
    model: 'gpt-test',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

/** The usage chunk OpenAI sends last, with `choices: []`. */
export function openAiUsageChunk() {
  return {
    id: 'chatcmpl-fault',
    object: 'chat.completion.chunk',
    created: 1_767_225_600,
    model: 'gpt-test',
    choices: [],
    usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
  };
}

/** The chunks of a whole text answer (without `[DONE]`). */
export function openAiTextChunks(parts: readonly string[] = ['Hi', ' there']) {
  return [
    openAiChunk({ role: 'assistant', content: '' }),
    ...parts.map((content) => openAiChunk({ content })),
    openAiChunk({}, 'stop'),
    openAiUsageChunk(),
  ];
}

/** A tool call as it appears in a streaming delta. Any field may be `undefined` to leave it out. */
export function openAiToolCallDelta(fields: {
  index?: number;
  id?: string;
  name?: string;
  arguments?: string;
}): Record<string, unknown> {
  const call: Record<string, unknown> = {};
  if (fields.index !== undefined) call['index'] = fields.index;
  if (fields.id !== undefined) {
    call['id'] = fields.id;
    call['type'] = 'function';
  }
  const fn: Record<string, unknown> = {};
  if (fields.name !== undefined) fn['name'] = fields.name;
  if (fields.arguments !== undefined) fn['arguments'] = fields.arguments;
  call['function'] = fn;
  return call;
}

/** A complete tool call for a non-streaming completion. */
export function openAiToolCall(id: string | undefined, name: string | undefined, args = '{"city":"Paris"}') {
  return openAiToolCallDelta({
    ...(id !== undefined ? { id } : {}),
    ...(name !== undefined ? { name } : {}),
    arguments: args,
  });
}

/** SSE frames for chunks (`data:` lines), with `data: [DONE]` unless `done` is false. */
export function openAiFrames(chunks: readonly unknown[], done = true): string[] {
  return openAiSse(chunks, { done });
}

/** An OpenAI error body. */
export function openAiError(type: string, message: string, code: string | null = null) {
  return { error: { message, type, param: null, code } };
}

// ---------------------------------------------------------------------------------------------------
// Shared

/** The frames of a whole, well-formed text answer for one provider. */
export function goodFrames(provider: UpstreamKind, parts?: readonly string[]): string[] {
  return provider === 'anthropic'
    ? anthropicFrames(anthropicTextEvents(parts))
    : openAiFrames(openAiTextChunks(parts));
}

/** The JSON body of a whole, well-formed text answer for one provider. */
export function goodBody(provider: UpstreamKind, text = ANSWER_TEXT): unknown {
  return provider === 'anthropic'
    ? anthropicMessage([{ type: 'text', text }])
    : openAiCompletion({ role: 'assistant', content: text });
}
