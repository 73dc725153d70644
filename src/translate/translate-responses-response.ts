/**
 * Translates a Responses API response object into a Messages `message`: the Responses decoder of whole
 * answers; the message around the blocks is `assembleMessage`'s. Pure: no I/O, no clock; fresh ids come
 * from the caller's `generateId`.
 *
 * Also home to the readers the event decoder (`translate-responses-stream.ts`) shares with it (item text,
 * reasoning, stop reason, terminal status), so both read upstream data by the same rules.
 *
 * @module
 */
import { TransportError } from '../errors.js';
import { isObject } from '../protocol/is-object.js';
import type { ContentBlock, Message, StopReason } from '../protocol/messages.js';
import type { ResponsesOutputItem, ResponsesResponse, ResponsesUsage } from '../protocol/responses.js';
import { assembleMessage, type AnswerToolCall, type ResponseContext } from './assemble-message.js';
import { mapResponsesError } from './map-responses-error.js';
import { mapResponsesUsage } from './map-responses-usage.js';
import { optionalString, protocolError } from './protocol-error.js';
import { encodeReasoningSignature } from './reasoning-signature-codec.js';
import {
  describeToolCall,
  readToolArguments,
  type ToolArgumentsReading,
  type ToolCallDescription,
  type ToolReading,
} from './read-tool-input.js';

/** What the Responses translators need: the response context, plus the output limit that was sent. */
export type ResponsesContext = ResponseContext & {
  /**
   * The `max_output_tokens` sent. llama.cpp answers `status: "completed"` for a response the limit cut;
   * output tokens at or over the limit then say what the status does not. @default none
   */
  maxOutputTokens?: number | undefined;
};

/**
 * The Messages `message` for a Responses API response object.
 *
 * - `id`: `msg_` + the upstream id when it is a usable id (as on Chat Completions), else a fresh one.
 * - `content`: one block per output item, in order:
 *   - `reasoning` → a `thinking` block: the `summary` texts joined by a blank line, else the
 *     `reasoning_text` contents; its `signature` carries the item's id and encrypted content
 *     (`reasoning-signature-codec.ts`), so the next request can restore the item. Omitted when it has
 *     neither text nor id nor encrypted content.
 *   - `message` → a `text` block of its `output_text` parts and `refusal` parts; omitted when empty.
 *   - `function_call` → a `tool_use` block: `call_id` through the tool-id codec, `name` through the
 *     tool-name map, `arguments` parsed as a JSON object.
 *   - other item types (hosted tools, never requested) are skipped.
 * - `stop_reason`: see `responsesStopReason`.
 * - `usage`: `mapResponsesUsage`.
 *
 * When the output limit cut the response, a tool call whose arguments stop mid-JSON is delivered with
 * them completed by appending only, as on the Chat Completions wire (docs/translation.md, "Tool calls cut
 * by the output limit"); otherwise such a call is `MODEL_EPROTO`.
 *
 * @throws TransportError mapped from `response.error` for `status: "failed"` (`mapResponsesError`);
 *   also for a response with an `error` and no `output`; `MODEL_EPROTO` for a response still `queued` /
 *   `in_progress`, one without an `output` list (unless `incomplete`), or an unusable tool call.
 */
export function translateResponsesResponse(response: ResponsesResponse, context: ResponsesContext): Message {
  if (!isObject(response)) throw protocolError('the upstream response is not a JSON object');
  checkTerminalStatus(response);
  const output = Array.isArray(response.output) ? response.output : [];
  if (output !== response.output) {
    // A 200 that carries only an error, or nothing at all, holds no answer, and an empty message would
    // pass for one. A response the output limit cut may have produced nothing: that one is empty.
    if (response.error !== undefined && response.error !== null) throw mapResponsesError(response.error);
    if (response.status !== 'incomplete') {
      throw protocolError('the response has no `output` list, so it holds no answer');
    }
  }
  const isCut = wasCut(response, context.maxOutputTokens);
  const { blocks, sawRefusal } = readOutput(output, isCut, context);
  const sawToolUse = blocks.some((block) => block.type === 'tool_call');
  return assembleMessage(
    context,
    response.id,
    blocks,
    responsesStopReason(response, context.maxOutputTokens, sawRefusal, sawToolUse),
    mapResponsesUsage(isObject(response.usage) ? response.usage : undefined),
  );
}

/** One block per output item the caller can use, in order, and whether a message item refused. */
function readOutput(
  output: readonly ResponsesOutputItem[],
  isCut: boolean,
  tools: ToolReading,
): { blocks: (ContentBlock | AnswerToolCall)[]; sawRefusal: boolean } {
  const blocks: (ContentBlock | AnswerToolCall)[] = [];
  let sawRefusal = false;
  let position = 0;
  for (const item of output) {
    if (!isObject(item)) continue;
    switch (item.type) {
      case 'reasoning': {
        const reasoning = readReasoningItem(item);
        const signature = reasoningSignatureFor(item, reasoning.source);
        if (reasoning.text !== '' || signature !== '') {
          blocks.push({ type: 'thinking', thinking: reasoning.text, signature });
        }
        break;
      }
      case 'message': {
        const message = readMessageItem(item);
        if (message.sawRefusal) sawRefusal = true;
        if (message.text !== '') blocks.push({ type: 'text', text: message.text });
        break;
      }
      case 'function_call': {
        const { input } = readFunctionCall(item, item.arguments, position++, isCut, tools);
        blocks.push({
          type: 'tool_call',
          providerId: optionalString(item.call_id),
          upstreamName: String(item.name),
          input,
        });
        break;
      }
      case null:
      case undefined:
      default:
        // Hosted-tool items and types added later: nothing this transport asked for.
        break;
    }
  }
  return { blocks, sawRefusal };
}

// ---------------------------------------------------------------------------------------------------
// Readers shared with the event decoder. Exported for `translate-responses-stream.ts`; not public API.

/**
 * @internal Throws for a response that is not a finished answer: `failed` (the upstream's error, mapped),
 * `cancelled`, `queued` / `in_progress` (background mode, which this transport never asks for).
 * `completed`, `incomplete` and an absent status pass.
 */
export function checkTerminalStatus(response: ResponsesResponse): void {
  const status = optionalString(response.status);
  switch (status) {
    case undefined:
    case 'completed':
    case 'incomplete':
      return;
    case 'failed':
      throw mapResponsesError(response.error ?? 'the upstream response failed without saying why');
    case 'cancelled':
      throw new TransportError('MODEL_EHTTP', 'upstream cancelled the response before it finished', {
        status: 502,
        type: 'api_error',
        retryable: true,
        provider: 'tpx',
      });
    default:
      throw protocolError(
        `the response has status ${JSON.stringify(status)}, not a finished one (completed, incomplete or failed)`,
      );
  }
}

/**
 * @internal Whether the output limit cut the response: `status: "incomplete"` for any reason but the
 * content filter, or (llama.cpp) `completed` with output tokens at or over the limit that was sent.
 */
export function wasCut(response: ResponsesResponse, maxOutputTokens: number | undefined): boolean {
  if (response.status === 'incomplete') return incompleteReason(response) !== 'content_filter';
  if (maxOutputTokens === undefined) return false;
  const usage: ResponsesUsage | null | undefined = isObject(response.usage) ? response.usage : undefined;
  const output = usage?.output_tokens;
  return typeof output === 'number' && output >= maxOutputTokens;
}

/**
 * @internal The Messages stop reason of a finished response.
 *
 * | upstream                                                      | `stop_reason` |
 * |---------------------------------------------------------------|---------------|
 * | `incomplete` for `content_filter`                             | `refusal`     |
 * | `incomplete` for `max_output_tokens` or any other reason; `completed` with output tokens ≥ the limit sent | `max_tokens` |
 * | `completed` (or no status) with a `refusal` part              | `refusal`     |
 * | `completed` (or no status) with a tool call                   | `tool_use`    |
 * | `completed` (or no status)                                    | `end_turn`    |
 */
export function responsesStopReason(
  response: ResponsesResponse,
  maxOutputTokens: number | undefined,
  sawRefusal: boolean,
  sawToolUse: boolean,
): StopReason {
  if (response.status === 'incomplete' && incompleteReason(response) === 'content_filter') return 'refusal';
  if (wasCut(response, maxOutputTokens)) return 'max_tokens';
  if (sawRefusal) return 'refusal';
  return sawToolUse ? 'tool_use' : 'end_turn';
}

function incompleteReason(response: ResponsesResponse): string | undefined {
  const details = response.incomplete_details;
  return isObject(details) ? optionalString(details['reason']) : undefined;
}

/** @internal The text of a `message` item: its `output_text` parts, then its `refusal` parts, in order. */
export function readMessageItem(item: ResponsesOutputItem): { text: string; sawRefusal: boolean } {
  let text = '';
  let sawRefusal = false;
  for (const part of Array.isArray(item.content) ? item.content : []) {
    if (!isObject(part)) continue;
    if (part['type'] === 'output_text' && typeof part['text'] === 'string') text += part['text'];
    else if (part['type'] === 'refusal' && typeof part['refusal'] === 'string') {
      text += part['refusal'];
      sawRefusal = true;
    }
  }
  return { text, sawRefusal };
}

/** Separates the parts of a reasoning item's summary (and of its reasoning text) in one thinking block. */
export const REASONING_PART_SEPARATOR = '\n\n';

/**
 * @internal The thinking text of a `reasoning` item: the non-empty `summary` texts joined by a blank
 * line; when there are none, the `reasoning_text` contents, joined the same way.
 */
export function readReasoningItem(item: ResponsesOutputItem): {
  text: string;
  source: 'summary' | 'content';
} {
  const summary = partTexts(item.summary, 'summary_text');
  if (summary.length > 0) return { text: summary.join(REASONING_PART_SEPARATOR), source: 'summary' };
  const content = partTexts(item.content, 'reasoning_text');
  if (content.length > 0) return { text: content.join(REASONING_PART_SEPARATOR), source: 'content' };
  return { text: '', source: 'summary' };
}

/** @internal The signature for a reasoning item: the codec's, or `""` when there is nothing to restore. */
export function reasoningSignatureFor(item: ResponsesOutputItem, source: 'summary' | 'content'): string {
  const id = optionalString(item.id);
  const encryptedContent = optionalString(item.encrypted_content);
  if (id === undefined && encryptedContent === undefined) return '';
  return encodeReasoningSignature({ id, encryptedContent, source });
}

/**
 * @internal A function call's input, read by `readToolArguments` (repaired, and fitted to its tool's schema
 * in `tools`; repairs reported to its `onRepair`). When the output limit cut the response (`isCut`), string arguments that stop mid-JSON are
 * completed by appending only, as on the Chat Completions wire: the cut call is delivered, and the stop
 * reason (`max_tokens`) tells the caller not to run it.
 *
 * @throws TransportError `MODEL_EPROTO` naming the call, for a call without a name, or with arguments
 *   that are not a JSON object (after a cut: not even the beginning of one).
 */
export function readFunctionCall(
  item: ResponsesOutputItem,
  argumentsValue: unknown,
  position: number,
  isCut: boolean,
  tools: ToolReading,
): ToolArgumentsReading {
  const description: ToolCallDescription = {
    position,
    name: optionalString(item.name),
    id: optionalString(item.call_id),
  };
  if (description.name === undefined) {
    throw protocolError(`${describeToolCall(description)} has no function name`);
  }
  return readToolArguments(argumentsValue, description, {
    isCut,
    schema: tools.toolSchemas?.get(description.name),
    onRepair: tools.onRepair,
  });
}

function partTexts(parts: unknown, type: string): string[] {
  if (!Array.isArray(parts)) return [];
  const texts: string[] = [];
  for (const part of parts) {
    if (isObject(part) && part['type'] === type && typeof part['text'] === 'string' && part['text'] !== '') {
      texts.push(part['text']);
    }
  }
  return texts;
}
