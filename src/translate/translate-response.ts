/**
 * Translates a non-streaming Chat Completions response into a Messages `message` (PROTOCOLS.md D.3).
 * Pure: no I/O, no clock; fresh ids come from the caller's `generateId`.
 *
 * Also home to the small readers the stream translator shares with it (message ids, reasoning, content
 * parts, tool-call arguments), so both directions read upstream data by the same rules.
 *
 * @module
 */
import { JSON_TOO_DEEP, MAX_JSON_DEPTH, scanJsonText } from '../protocol/json-nesting-depth.js';
import { TransportError } from '../errors.js';
import type { ChatCompletionResponse, ChatToolCallIn } from '../protocol/chat-completions.js';
import type { ContentBlock, Message, StopReason } from '../protocol/messages.js';
import { completeCutJson } from './complete-cut-json.js';
import { mapFinishReason } from './map-stop-reason.js';
import { mapUsage } from './map-usage.js';
import { encodeToolIds } from './tool-id-codec.js';
import { isObject } from '../protocol/is-object.js';
import { parseExactJson } from '../protocol/exact-json.js';

/** The part of the tool-name map the response translators need (see `tool-name-codec.ts`). */
export interface UpstreamToolNames {
  /** The caller's tool name for a name the provider used. */
  fromUpstream(name: string): string;
}

/** What a response translator needs besides the upstream data. */
export interface ResponseContext {
  /** The `model` of the caller's request, echoed back (clients compare it). */
  requestModel: string;
  /** Maps provider tool names back to the caller's. */
  toolNames: UpstreamToolNames;
  /** Fresh `[A-Za-z0-9_-]+` ids, for a message or tool call the provider gave no usable id. */
  generateId: () => string;
}

/**
 * The Messages `message` for a Chat Completions response.
 *
 * - `id`: `msg_` + the upstream id when it is a non-empty `[A-Za-z0-9_-]+` string of at most 200
 *   characters (kept as is when it already starts with `msg_`), else `msg_` + `generateId()`.
 * - `model`: the requested model, not the upstream's.
 * - `content`, in this order (what Claude itself emits):
 *   1. one `thinking` block with `signature: ""` from `reasoning_content` (DeepSeek, xAI, Qwen), else
 *      `reasoning` (Groq, Ollama, OpenRouter), else the text of `reasoning_details[]`, followed by the
 *      thinking parts of an array `content` (Mistral Magistral); omitted when empty;
 *   2. one `text` block from a string `content` or the text parts of an array `content`, followed by
 *      `refusal`; omitted when empty;
 *   3. one `tool_use` block per tool call, ids through the tool-id codec (`encodeToolIds`: repeated,
 *      empty and odd provider ids get distinct, valid, reversible ids), names through `toolNames`.
 * - `stop_reason`: `max_tokens` after `length`; else `refusal` when the model refused; else
 *   `mapFinishReason(finish_reason, hasToolCalls)`.
 * - `stop_sequence`: always `null` (OpenAI does not say which sequence matched).
 * - `usage`: `mapUsage(usage)`.
 *
 * Tool-call `arguments` must come out as a JSON object: a JSON string of an object, an object as is, or
 * `""`/whitespace/absent for `{}`. Anything else (malformed JSON, an array, a number, `"null"`) throws
 * `MODEL_EPROTO` naming the call, rather than running a tool with made-up input — except after
 * `finish_reason: "length"`: a call the output limit cut is delivered as a `tool_use` whose input is
 * what arrived, completed by `completeCutJson` (`"{"` gives `{}`), with `stop_reason: "max_tokens"`, as
 * Anthropic delivers a `tool_use` its own limit cut. The stream translator delivers the same input.
 *
 * @throws TransportError `MODEL_EPROTO` for a response without a usable choice or with unusable tool
 *   calls; `MODEL_EHTTP` for `finish_reason: "error"` (OpenRouter: the generation failed upstream).
 */
export function translateResponse(response: ChatCompletionResponse, context: ResponseContext): Message {
  if (!isObject(response)) throw protocolError('the upstream response is not a JSON object');
  const choices: unknown = response['choices'];
  if (!Array.isArray(choices) || choices.length === 0) {
    throw protocolError('the upstream response has no choices');
  }
  const choice: unknown = choices[0];
  if (!isObject(choice) || !isObject(choice['message'])) {
    throw protocolError('the upstream response has no message in choices[0]');
  }
  const upstreamMessage = choice['message'];
  const finishReason = optionalString(choice['finish_reason']);
  if (finishReason === 'error') throw finishedWithError();

  // Generate the message id before any tool id, as the stream translator does, so that both number a
  // deterministic id source the same way.
  const id = messageIdFor(response['id'], context.generateId);

  const parts = readContentParts(upstreamMessage['content'], 'choices[0].message.content');
  let thinking = readReasoning(upstreamMessage);
  let text = '';
  for (const part of parts) {
    if (part.kind === 'thinking') thinking += part.text;
    else text += part.text;
  }
  const refusal = optionalString(upstreamMessage['refusal']) ?? '';
  text += refusal;

  const content: ContentBlock[] = [];
  if (thinking !== '') content.push({ type: 'thinking', thinking, signature: '' });
  if (text !== '') content.push({ type: 'text', text });

  const toolCalls = readToolCalls(upstreamMessage['tool_calls']);
  const isCut = finishReason === 'length';
  const providerIds = toolCalls.map((call) => optionalString(call.id));
  const ids = encodeToolIds(providerIds, context.generateId);
  toolCalls.forEach((call, position) => {
    const callFunction = isObject(call.function) ? call.function : undefined;
    const upstreamName = optionalString(callFunction?.['name']);
    const description = { position, name: upstreamName, id: providerIds[position] };
    if (upstreamName === undefined) {
      throw protocolError(`${describeToolCall(description)} has no function name`);
    }
    content.push({
      type: 'tool_use',
      id: ids[position]!,
      name: context.toolNames.fromUpstream(upstreamName),
      input: isCut
        ? parseCutToolInput(callFunction?.['arguments'], description)
        : parseToolInput(callFunction?.['arguments'], description),
    });
  });

  const stopReason = stopReasonFor(finishReason, refusal !== '', toolCalls.length > 0);
  const usage: unknown = response['usage'];
  return {
    id,
    type: 'message',
    role: 'assistant',
    model: context.requestModel,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: mapUsage(isObject(usage) ? usage : undefined),
  };
}

// ---------------------------------------------------------------------------------------------------
// Readers shared with the stream translator. Exported for `stream-translator.ts`; not public API.

const SAFE_ID = /^[A-Za-z0-9_-]+$/;
const MAX_MESSAGE_ID_LENGTH = 200;
const EXCERPT_LENGTH = 100;

/** @internal The Messages id for an upstream response id (see `translateResponse`). */
export function messageIdFor(upstreamId: unknown, generateId: () => string): string {
  if (
    typeof upstreamId === 'string' &&
    upstreamId.length <= MAX_MESSAGE_ID_LENGTH &&
    SAFE_ID.test(upstreamId)
  ) {
    return upstreamId.startsWith('msg_') ? upstreamId : `msg_${upstreamId}`;
  }
  return `msg_${generateId()}`;
}

/**
 * @internal Reasoning text of a message or delta: the first non-empty of `reasoning_content`,
 * `reasoning`, and the texts of `reasoning_details[]`. One source only: OpenRouter sends the same text in
 * both `reasoning` and `reasoning_details`.
 */
export function readReasoning(message: Record<string, unknown>): string {
  const reasoningContent = optionalString(message['reasoning_content']);
  if (reasoningContent !== undefined) return reasoningContent;
  const reasoning = optionalString(message['reasoning']);
  if (reasoning !== undefined) return reasoning;
  const details = message['reasoning_details'];
  if (!Array.isArray(details)) return '';
  let text = '';
  for (const detail of details) {
    if (!isObject(detail)) continue;
    text += optionalString(detail['text']) ?? optionalString(detail['summary']) ?? '';
  }
  return text;
}

/** @internal One piece of `content`, in order. */
export interface ContentPart {
  kind: 'text' | 'thinking';
  text: string;
}

/**
 * @internal The text and thinking pieces of a `content` value: a string is one text piece; an array
 * gives its `text` parts and its `thinking` parts (Mistral Magistral, quirk 14:
 * `{type:"thinking",thinking:[{type:"text",text}]}`) in order; other part types are skipped; `null` and
 * absent give nothing. Empty pieces are dropped.
 *
 * @throws TransportError `MODEL_EPROTO` when `content` is neither a string, an array nor null.
 */
export function readContentParts(content: unknown, where: string): ContentPart[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ kind: 'text', text: content }];
  if (!Array.isArray(content)) {
    throw protocolError(`${where} is ${describeType(content)}, not a string or an array of parts`);
  }
  const parts: ContentPart[] = [];
  for (const part of content) {
    if (typeof part === 'string') {
      if (part !== '') parts.push({ kind: 'text', text: part });
      continue;
    }
    if (!isObject(part)) continue;
    if (part['type'] === 'text') {
      const text = optionalString(part['text']);
      if (text !== undefined) parts.push({ kind: 'text', text });
    } else if (part['type'] === 'thinking') {
      const text = thinkingText(part['thinking']);
      if (text !== '') parts.push({ kind: 'thinking', text });
    }
  }
  return parts;
}

/** @internal Identifies a tool call in error messages. */
export interface ToolCallDescription {
  /** Position among the response's tool calls (or the stream's, in order of appearance). */
  position: number;
  name: string | undefined;
  id: string | undefined;
}

/** @internal "tool call #1 (name "get_weather", id "call_1")", for error messages. */
export function describeToolCall(call: ToolCallDescription): string {
  const details = [
    call.name === undefined ? 'no name' : `name ${JSON.stringify(call.name)}`,
    call.id === undefined ? 'no id' : `id ${JSON.stringify(call.id)}`,
  ];
  return `tool call #${call.position} (${details.join(', ')})`;
}

/**
 * @internal The tool input for a call's `arguments`: a JSON object string is parsed; an object is taken
 * as is; `""`, whitespace, `null` and absent give `{}`.
 *
 * @throws TransportError `MODEL_EPROTO` naming the call for malformed JSON or JSON that is not an object.
 */
export function parseToolInput(argumentsValue: unknown, call: ToolCallDescription): Record<string, unknown> {
  if (argumentsValue === undefined || argumentsValue === null) return {};
  if (typeof argumentsValue !== 'string') {
    if (isObject(argumentsValue)) return argumentsValue;
    throw protocolError(
      `${describeToolCall(call)} has arguments that are ${describeType(argumentsValue)}, not a JSON object: ${excerptOf(argumentsValue)}`,
    );
  }
  return parseToolArgumentsText(argumentsValue, call);
}

/**
 * @internal Like `parseToolInput`, for a call the output limit may have cut (`finish_reason: "length"`):
 * string arguments are completed by {@link cutArgumentsCompletion} before they are parsed.
 */
export function parseCutToolInput(
  argumentsValue: unknown,
  call: ToolCallDescription,
): Record<string, unknown> {
  if (typeof argumentsValue !== 'string') return parseToolInput(argumentsValue, call);
  return parseToolArgumentsText(argumentsValue + cutArgumentsCompletion(argumentsValue, call), call);
}

/**
 * @internal What to append to the arguments of a call the output limit may have cut, so that they form
 * a JSON object: `''` when they already do (or are blank, which means `{}`), else `completeCutJson`'s
 * suffix.
 *
 * @throws TransportError `MODEL_EPROTO` naming the call when the text is not even the beginning of a
 *   JSON object: no cut explains that.
 */
export function cutArgumentsCompletion(text: string, call: ToolCallDescription): string {
  if (!/\S/.test(text)) return '';
  const suffix = completeCutJson(text);
  if (suffix === undefined) {
    throw protocolError(
      `${describeToolCall(call)} has arguments that are not the beginning of a JSON object: ${excerpt(text)}`,
    );
  }
  return suffix;
}

/** @internal Like `parseToolInput`, for arguments already joined into one string. */
export function parseToolArgumentsText(text: string, call: ToolCallDescription): Record<string, unknown> {
  if (!/\S/.test(text)) return {};
  const flags = scanJsonText(text);
  if ((flags & JSON_TOO_DEEP) !== 0) {
    throw protocolError(
      `${describeToolCall(call)} has arguments that nest more than ${MAX_JSON_DEPTH} levels deep`,
    );
  }
  let value: unknown;
  try {
    value = parseExactJson(text, flags);
  } catch (error) {
    throw protocolError(
      `${describeToolCall(call)} has arguments that are not valid JSON: ${excerpt(text)}`,
      error,
    );
  }
  if (!isObject(value)) {
    throw protocolError(
      `${describeToolCall(call)} has arguments that are ${describeType(value)}, not a JSON object: ${excerpt(text)}`,
    );
  }
  return value;
}

/**
 * @internal The stop reason of a whole answer: `max_tokens` when the token limit cut it (even a refusal:
 * the client may continue the turn), else `refusal` when the model refused, else `mapFinishReason`.
 */
export function stopReasonFor(
  finishReason: string | undefined,
  sawRefusal: boolean,
  sawToolCalls: boolean,
): StopReason {
  if (finishReason !== 'length' && sawRefusal) return 'refusal';
  return mapFinishReason(finishReason, sawToolCalls);
}

/** @internal The error for `finish_reason: "error"` (OpenRouter's normalised failure). */
export function finishedWithError(): TransportError {
  return new TransportError(
    'MODEL_EHTTP',
    'upstream finished with finish_reason "error": the generation failed and its output is incomplete',
    { status: 502, type: 'api_error', retryable: true, provider: 'tpx' },
  );
}

/** @internal A `MODEL_EPROTO` error for upstream data this library cannot read. */
export function protocolError(message: string, cause?: unknown): TransportError {
  return new TransportError(
    'MODEL_EPROTO',
    `unintelligible upstream answer: ${message}`,
    cause === undefined ? { provider: 'tpx' } : { provider: 'tpx', cause },
  );
}

/** @internal A non-empty string, else `undefined`. */
export function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function readToolCalls(value: unknown): ChatToolCallIn[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    throw protocolError(`choices[0].message.tool_calls is ${describeType(value)}, not an array`);
  }
  return value.map((call: unknown, position) => {
    if (!isObject(call))
      throw protocolError(`tool call #${position} is ${describeType(call)}, not an object`);
    return call;
  });
}

/** Mistral sends `thinking` as an array of text parts; other servers may send a string. */
function thinkingText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return '';
  let text = '';
  for (const item of value) {
    if (typeof item === 'string') text += item;
    else if (isObject(item) && typeof item['text'] === 'string') text += item['text'];
  }
  return text;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return type === 'object' ? 'an object' : `a ${type}`;
}

function excerptOf(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return excerpt(text);
}

function excerpt(text: string): string {
  const shown = text.length <= EXCERPT_LENGTH ? text : `${text.slice(0, EXCERPT_LENGTH)}…`;
  return JSON.stringify(shown);
}
