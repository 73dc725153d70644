/**
 * What the mock model answers, in replay, for one recorded exchange: the answer the caller got,
 * turned back into the answer the upstream gave, so that tpx translates it into the same message again.
 *
 * | recorded                                   | replayed |
 * |--------------------------------------------|----------|
 * | a `response` (the delivered message)       | a completion: its `thinking` as reasoning, its text, its `tool_use` blocks as tool calls — each under the id the upstream used (the tool-id codec decoded), each function under the name sent upstream (the tool-name codec) — its `stop_reason` as the finish reason, its `usage` as the usage |
 * | a `response` and an `errorCode` (a stream cut short) | the same content, then a stream error |
 * | an `error` with an HTTP status             | that status, with the error's type and message in an OpenAI-shaped body |
 *
 * JSON or a stream is the replayed request's choice, as for any answer of the mock model.
 *
 * @module
 */
import type { JournalRecord } from '../journal/journal-record.js';
import { isObject } from '../protocol/is-object.js';
import { decodeToolId } from '../translate/tool-id-codec.js';
import { encodeToolName } from '../translate/tool-name-codec.js';
import type { Completion, CompletionToolCall } from './completion.js';
import type { Plan } from './plan-reply.js';

/** The Chat Completions finish reason of a Messages stop reason. */
function finishReasonOf(stopReason: unknown): string {
  switch (stopReason) {
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'refusal':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, pause_turn and anything newer: a normal end.
      return 'stop';
  }
}

/** The completion the upstream sent for a delivered Messages `message`. */
export function completionOf(message: Record<string, unknown>): Completion {
  const blocks = Array.isArray(message['content']) ? message['content'].filter(isObject) : [];
  let text: string | null = null;
  let reasoning: string | null = null;
  const toolCalls: CompletionToolCall[] = [];
  for (const block of blocks) {
    if (block['type'] === 'text' && typeof block['text'] === 'string') text = (text ?? '') + block['text'];
    else if (block['type'] === 'thinking' && typeof block['thinking'] === 'string')
      reasoning = (reasoning ?? '') + block['thinking'];
    else if (block['type'] === 'tool_use') {
      const input = block['input'];
      toolCalls.push({
        id: decodeToolId(String(block['id'])),
        name: encodeToolName(String(block['name'])),
        arguments: typeof input === 'string' ? input : JSON.stringify(input ?? {}),
      });
    }
  }
  const completion: Completion = {
    reasoning,
    text,
    toolCalls,
    finishReason: finishReasonOf(message['stop_reason']),
  };
  const usage = message['usage'];
  if (isObject(usage) && typeof usage['input_tokens'] === 'number') {
    const outputTokens = typeof usage['output_tokens'] === 'number' ? usage['output_tokens'] : 0;
    completion.usage = { inputTokens: usage['input_tokens'], outputTokens, reasoningTokens: 0 };
  }
  return completion;
}

/** The Messages error body's `error` object, or a generic one. */
function errorObjectOf(record: JournalRecord): { type: string; message: string } {
  const body = record.error;
  const error = isObject(body) && isObject(body['error']) ? body['error'] : {};
  return {
    type: typeof error['type'] === 'string' ? error['type'] : 'api_error',
    message: typeof error['message'] === 'string' ? error['message'] : `recorded status ${record.status}`,
  };
}

/** The plan that replays `record`, or why it cannot be replayed. */
export function replayPlan(record: JournalRecord, chunkDelayMs: number): Plan | string {
  const { response } = record;
  if (isObject(response)) {
    const completion = completionOf(response);
    if (record.errorCode === undefined) return { kind: 'completion', completion, delayMs: 0, chunkDelayMs };
    const { type, message } = errorObjectOf(record);
    return {
      kind: 'stream_error',
      completion: { ...completion, finishReason: null },
      afterChunks: Number.MAX_SAFE_INTEGER,
      error: { message, type, param: null, code: null },
      delayMs: 0,
      chunkDelayMs,
    };
  }
  if (record.status >= 400 && record.error !== undefined) {
    const { type, message } = errorObjectOf(record);
    return {
      kind: 'http_error',
      status: record.status,
      headers: {},
      body: { error: { message, type, param: null, code: null } },
      delayMs: 0,
    };
  }
  return 'it has neither a response nor an error';
}
