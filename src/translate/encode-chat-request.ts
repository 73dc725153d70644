/**
 * The wire-neutral request (`neutral-request.ts`) → a Chat Completions request body (docs/translation.md).
 * Pure. The body is built field by field, so nothing reaches the provider that is not part of
 * `ChatCompletionRequest`.
 *
 * @module
 */
import type { ChatCompletionRequest, ChatFunctionTool } from '../protocol/chat-completions.js';
import { encodeChatMessages } from './encode-chat-messages.js';
import { invalidRequest } from './invalid-request.js';
import type { NeutralRequest, NeutralTool } from './neutral-request.js';

/** Options for `encodeChatRequest`. */
export interface EncodeChatRequestOptions {
  /** Model sent upstream. @default the request's `model` */
  model?: string;
  /**
   * Which field carries `max_tokens` upstream: reasoning models want `max_completion_tokens`, many
   * compatible servers only know `max_tokens`. @default 'max_tokens'
   */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
}

/** Chat Completions accepts at most this many `stop` sequences. */
const MAX_STOP_SEQUENCES = 4;

/**
 * The Chat Completions body for a prepared request.
 *
 * @throws TransportError `MODEL_EINVAL` for more stop sequences than Chat Completions takes, or a
 *   conversation with nothing to send.
 */
export function encodeChatRequest(
  prepared: NeutralRequest,
  options: EncodeChatRequestOptions = {},
): ChatCompletionRequest {
  const body: ChatCompletionRequest = {
    model: options.model ?? prepared.model,
    messages: encodeChatMessages(prepared.system, prepared.turns),
  };
  body[options.maxTokensField ?? 'max_tokens'] = prepared.maxTokens;
  const stop = chatStopSequences(prepared.stopSequences);
  if (stop !== undefined) body.stop = stop;
  if (prepared.temperature !== undefined) body.temperature = prepared.temperature;
  if (prepared.topP !== undefined) body.top_p = prepared.topP;
  if (prepared.stream) {
    body.stream = true;
    // Always ask for usage: without it a translated stream could not report token counts.
    body.stream_options = { include_usage: true };
  }
  if (prepared.tools.length > 0) body.tools = prepared.tools.map(chatTool);
  const choice = prepared.toolChoice;
  if (choice !== undefined) {
    body.tool_choice =
      typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
    if (prepared.parallelToolCalls === false) body.parallel_tool_calls = false;
  }
  if (prepared.effort !== undefined) body.reasoning_effort = prepared.effort;
  if (prepared.outputSchema !== undefined) {
    body.response_format = {
      type: 'json_schema',
      json_schema: { name: 'output', schema: prepared.outputSchema, strict: true },
    };
  }
  if (prepared.user !== undefined) body.user = prepared.user;
  if (prepared.cacheControl !== undefined) body.cache_control = prepared.cacheControl;
  return body;
}

function chatStopSequences(stopSequences: readonly string[]): string[] | undefined {
  if (stopSequences.length === 0) return undefined;
  if (stopSequences.length > MAX_STOP_SEQUENCES) {
    invalidRequest(
      `stop_sequences has ${stopSequences.length} entries, but OpenAI-compatible servers accept at most ` +
        `${MAX_STOP_SEQUENCES} stop sequences; send ${MAX_STOP_SEQUENCES} or fewer`,
    );
  }
  return [...stopSequences];
}

/** A function tool; `strict` only where the caller said. */
function chatTool(tool: NeutralTool): ChatFunctionTool {
  const fn: ChatFunctionTool['function'] = { name: tool.name };
  if (tool.description !== undefined) fn.description = tool.description;
  if (tool.parameters !== undefined) fn.parameters = tool.parameters;
  if (tool.strict !== undefined) fn.strict = tool.strict;
  return { type: 'function', function: fn };
}
