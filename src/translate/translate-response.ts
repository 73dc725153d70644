/**
 * Translates a non-streaming Chat Completions response into a Messages `message` (docs/protocol.md D.3): the
 * Chat Completions decoder of whole answers; the message around the blocks is `assembleMessage`'s. Pure:
 * no I/O, no clock; fresh ids come from the caller's `generateId`.
 *
 * Also home to the small readers of Chat Completions data the chunk decoder (`stream-translator.ts`)
 * shares with it (reasoning, content parts, the stop reason), so both read upstream data by the same rules.
 *
 * @module
 */
import { TransportError } from '../errors.js';
import type { ChatCompletionResponse } from '../protocol/chat-completions.js';
import type { ContentBlock, Message, StopReason } from '../protocol/messages.js';
import { isObject } from '../protocol/is-object.js';
import { assembleMessage, type AnswerToolCall, type ResponseContext } from './assemble-message.js';
import { mapFinishReason } from './map-stop-reason.js';
import { mapUsage } from './map-usage.js';
import { describeType, optionalString, protocolError } from './protocol-error.js';
import { describeToolCall, readToolArguments, type ToolReading } from './read-tool-input.js';

export type { ResponseContext, UpstreamToolNames } from './assemble-message.js';

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
 *      empty and odd provider ids get distinct, valid ids, each decoding to a wire id of its own),
 *      names through `toolNames`.
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

  const parts = readContentParts(upstreamMessage['content'], 'choices[0].message.content');
  let thinking = readReasoning(upstreamMessage);
  let text = '';
  for (const part of parts) {
    if (part.kind === 'thinking') thinking += part.text;
    else text += part.text;
  }
  const refusal = optionalString(upstreamMessage['refusal']) ?? '';
  text += refusal;

  const blocks: (ContentBlock | AnswerToolCall)[] = [];
  if (thinking !== '') blocks.push({ type: 'thinking', thinking, signature: '' });
  if (text !== '') blocks.push({ type: 'text', text });
  const toolCalls = readToolCalls(upstreamMessage['tool_calls'], finishReason === 'length', context);
  blocks.push(...toolCalls);

  const stopReason = stopReasonFor(finishReason, refusal !== '', toolCalls.length > 0);
  const usage: unknown = response['usage'];
  return assembleMessage(
    context,
    response['id'],
    blocks,
    stopReason,
    mapUsage(isObject(usage) ? usage : undefined),
  );
}

// ---------------------------------------------------------------------------------------------------
// Readers shared with the stream translator. Exported for `stream-translator.ts`; not public API.

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

/**
 * The tool calls of `choices[0].message`, each with its input: a call without a function name is
 * refused; after a `length` cut (`isCut`) string arguments are completed before they are parsed.
 */
function readToolCalls(value: unknown, isCut: boolean, tools: ToolReading): AnswerToolCall[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    throw protocolError(`choices[0].message.tool_calls is ${describeType(value)}, not an array`);
  }
  const calls = value.map((call: unknown, position) => {
    if (!isObject(call))
      throw protocolError(`tool call #${position} is ${describeType(call)}, not an object`);
    return call;
  });
  return calls.map((call, position): AnswerToolCall => {
    const callFunction = isObject(call['function']) ? call['function'] : undefined;
    const upstreamName = optionalString(callFunction?.['name']);
    const description = { position, name: upstreamName, id: optionalString(call['id']) };
    if (upstreamName === undefined) {
      throw protocolError(`${describeToolCall(description)} has no function name`);
    }
    const argumentsValue = callFunction?.['arguments'];
    return {
      type: 'tool_call',
      providerId: description.id,
      upstreamName,
      input: readToolArguments(argumentsValue, description, {
        isCut,
        schema: tools.toolSchemas?.get(upstreamName),
        onRepair: tools.onRepair,
      }).input,
    };
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
