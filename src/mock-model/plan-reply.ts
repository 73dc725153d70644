/**
 * Resolves what the mock model sends for one request, whichever endpoint asked: the next scripted reply,
 * else the default behaviour (`default-reply.ts`), as a `Plan` the answer writers put on the wire.
 *
 * @module
 */
import type { MockRequest } from './mock-request.js';
import { defaultCompletion } from './default-reply.js';
import type { MockModelState } from './mock-model-state.js';
import type { Completion } from './completion.js';
import { classifyReply, type MockScriptedToolCall } from './script.js';

/** What to send for one request. */
export type Plan =
  | { kind: 'completion'; completion: Completion; delayMs: number; chunkDelayMs: number }
  | { kind: 'http_error'; status: number; headers: Record<string, string>; body: unknown; delayMs: number }
  | {
      kind: 'stream_error';
      completion: Completion;
      /** Content chunks (events, on the Responses endpoint) sent before the error. */
      afterChunks: number;
      error: Record<string, unknown>;
      delayMs: number;
      chunkDelayMs: number;
    };

const STREAM_ERROR_TEXT = 'This answer is cut short by a scripted error.';
const DEFAULT_AFTER_CHUNKS = 2;

/** Takes the next scripted reply, or the default behaviour, and resolves it into a plan. */
export function planReply(state: MockModelState, request: MockRequest): Plan {
  const reply = state.replies.shift();
  const nextToolCallId = (): string => `call_mock${String(++state.toolCallCount).padStart(6, '0')}`;
  if (reply === undefined) {
    return {
      kind: 'completion',
      completion: defaultCompletion(request, nextToolCallId),
      delayMs: 0,
      chunkDelayMs: state.chunkDelayMs,
    };
  }
  const delayMs = reply.delay_ms ?? 0;
  const chunkDelayMs = reply.chunk_delay_ms ?? state.chunkDelayMs;
  const scriptedCalls = (calls: readonly MockScriptedToolCall[] | undefined): Completion['toolCalls'] =>
    (calls ?? []).map((call) => ({
      id: call.id ?? nextToolCallId(),
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
    }));
  const classified = classifyReply(reply);
  switch (classified.kind) {
    case 'text':
      return {
        kind: 'completion',
        completion: {
          reasoning: classified.reply.reasoning ?? null,
          text: classified.reply.text,
          toolCalls: [],
          finishReason: classified.reply.finish_reason ?? 'stop',
        },
        delayMs,
        chunkDelayMs,
      };
    case 'tool_calls':
      return {
        kind: 'completion',
        completion: {
          reasoning: classified.reply.reasoning ?? null,
          text: classified.reply.text ?? null,
          toolCalls: scriptedCalls(classified.reply.tool_calls),
          finishReason: classified.reply.finish_reason ?? 'tool_calls',
        },
        delayMs,
        chunkDelayMs,
      };
    case 'error': {
      const { status, headers, body } = classified.reply.error;
      return {
        kind: 'http_error',
        status,
        headers: headers ?? {},
        body: body ?? defaultErrorBody(status),
        delayMs,
      };
    }
    case 'stream_error': {
      const { reasoning, text, tool_calls: toolCalls, stream_error: streamError } = classified.reply;
      const hasContent = reasoning !== undefined || text !== undefined || toolCalls !== undefined;
      return {
        kind: 'stream_error',
        completion: {
          reasoning: reasoning ?? null,
          text: hasContent ? (text ?? null) : STREAM_ERROR_TEXT,
          toolCalls: scriptedCalls(toolCalls),
          finishReason: null,
        },
        afterChunks: streamError.after_chunks ?? DEFAULT_AFTER_CHUNKS,
        error: streamError.error ?? {
          message: 'The mock model was scripted to fail in the middle of this stream.',
          type: 'server_error',
          param: null,
          code: null,
        },
        delayMs,
        chunkDelayMs,
      };
    }
    default: {
      const unreachable: never = classified;
      return unreachable;
    }
  }
}

/** An OpenAI-shaped error body for a scripted error status without a body of its own. */
function defaultErrorBody(status: number): { error: Record<string, unknown> } {
  const [type, code, message] = ((): [string, string | null, string] => {
    switch (status) {
      case 400:
        return ['invalid_request_error', null, 'The mock model was scripted to reject this request.'];
      case 401:
        return ['invalid_request_error', 'invalid_api_key', 'Incorrect API key provided.'];
      case 403:
        return ['permission_error', null, 'You are not allowed to use this model.'];
      case 404:
        return [
          'invalid_request_error',
          'model_not_found',
          'The model does not exist or you do not have access to it.',
        ];
      case 413:
        return ['invalid_request_error', 'request_too_large', 'The request is too large.'];
      case 429:
        return ['rate_limit_error', 'rate_limit_exceeded', 'Rate limit reached. Please try again later.'];
      case 503:
        return [
          'service_unavailable_error',
          'server_is_overloaded',
          'The server is overloaded. Please slow down.',
        ];
      default:
        return status >= 500
          ? ['server_error', null, 'The server had an error while processing your request.']
          : ['invalid_request_error', null, `The mock model was scripted to answer with status ${status}.`];
    }
  })();
  return { error: { message, type, param: null, code } };
}
