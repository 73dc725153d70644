/**
 * Translates a Responses API stream (parsed events) into Messages stream events: the Responses event
 * decoder, an explicit, I/O-free state machine, `ResponsesStreamTranslator`. It reads the events; the
 * Messages events are written by the stream writer both wires share (`MessageStreamWriter`: one open block
 * at a time, tool ids, usage, the end), so the stream keeps the same laws as on Chat Completions —
 * accumulating the stream gives the message `translateResponsesResponse` gives for the same answer,
 * every block started is stopped, nothing follows `message_stop`.
 *
 * How the Responses events become Messages events:
 *
 * - `response.output_text.delta` and `response.refusal.delta` stream live into a `text` block for their
 *   message item; `response.reasoning_summary_text.delta` and `response.reasoning_text.delta` into a
 *   `thinking` block for their reasoning item (summary parts separated by a blank line). Another item's
 *   text closes the open block first: a Messages stream has one open block at a time.
 * - `response.output_item.done` of a reasoning item adds its signature (`signature_delta`: the item's id
 *   and encrypted content, `reasoning-signature-codec.ts`) and closes its block; a reasoning item with no
 *   text but something to restore still gets a (blank) thinking block to carry its signature.
 * - A function call is collected from `response.output_item.added`, `response.function_call_arguments.delta`
 *   and `.done`, and sent whole at its `response.output_item.done` (`content_block_start`, one
 *   `input_json_delta`, `content_block_stop`), once its arguments are known to form a JSON object. A call
 *   whose arguments do not waits for the end: when the output limit cut the response it is sent with its
 *   arguments completed by appending only, as on the Chat Completions wire (stop reason `max_tokens`);
 *   otherwise the stream fails with `MODEL_EPROTO`. The caller never receives tool input it cannot parse.
 * - `response.completed` / `response.incomplete` end the message (`message_delta` with the stop reason and
 *   usage, `message_stop`); `response.failed` and `error` fail the stream with the upstream's error. Items
 *   the terminal response holds that the stream never finished (a server that sends only `.done`, or only
 *   the terminal event) are translated from it, so nothing the response says is lost.
 * - Other event types (`response.created`, `…part.added`, `…text.done`, types added later) carry nothing
 *   the caller needs and are skipped.
 *
 * Items are keyed by `item_id`, else by `output_index`: llama.cpp's events carry no `output_index`, and
 * OpenAI's carry both.
 *
 * @module
 */
import type { MessageStreamEvent } from '../protocol/messages.js';
import type { ResponsesOutputItem, ResponsesResponse, ResponsesStreamEvent } from '../protocol/responses.js';
import { isObject } from '../protocol/is-object.js';
import { stringifyExactJson } from '../protocol/exact-json.js';
import { mapResponsesError } from './map-responses-error.js';
import { mapResponsesUsage } from './map-responses-usage.js';
import { MessageStreamWriter } from './message-stream-writer.js';
import { optionalString, protocolError } from './protocol-error.js';
import type { ToolArgumentsReading } from './read-tool-input.js';
import {
  REASONING_PART_SEPARATOR,
  checkTerminalStatus,
  readFunctionCall,
  readMessageItem,
  readReasoningItem,
  reasoningSignatureFor,
  responsesStopReason,
  wasCut,
  type ResponsesContext,
} from './translate-responses-response.js';

/** What the stream translator needs: the Responses context, plus an optional input-token estimate. */
export type ResponsesStreamContext = ResponsesContext & {
  /** Sent as `message_start.usage.input_tokens` (the real count only arrives at the end). @default 0 */
  inputTokensEstimate?: number | undefined;
};

/** One output item of the upstream response, from its first event to its `.done`. */
interface ItemState {
  key: string;
  type: string | undefined;
  /** Text or thinking streamed for the item so far, in pieces (joined only when needed). */
  streamed: string[];
  /** `reasoning`: where its streamed text comes from, once known. */
  source: 'summary' | 'content' | undefined;
  /** `reasoning`: the summary or content part the last delta belonged to. */
  partIndex: number | undefined;
  isDone: boolean;
  /** `function_call` */
  callId: string | undefined;
  name: string | undefined;
  fragments: string[];
  /** The whole arguments, from `.function_call_arguments.done` or the item's `.done`. */
  finalArguments: unknown;
  /** Position among the function calls, for error messages. */
  position: number;
  /** `function_call`: its arguments do not parse yet; decided at the end. */
  isHeld: boolean;
}

/**
 * The Responses stream translation state machine. Feed it `start()`, then `push(event)` for each parsed
 * event until `isFinished`, then — when the upstream stream ended without a terminal event — `end()`,
 * which fails. Each returns the Messages events to send, in order.
 */
export class ResponsesStreamTranslator {
  readonly #context: ResponsesStreamContext;
  readonly #writer: MessageStreamWriter;
  readonly #items = new Map<string, ItemState>();
  readonly #order: ItemState[] = [];
  #callCount = 0;
  #sawRefusal = false;

  constructor(context: ResponsesStreamContext) {
    this.#context = context;
    this.#writer = new MessageStreamWriter(context);
  }

  /** Whether a terminal event arrived: nothing more is to be read. */
  get isFinished(): boolean {
    return this.#writer.isFinished;
  }

  /** Events to emit before any upstream event (`message_start`). Later calls return `[]`. */
  start(): MessageStreamEvent[] {
    return this.#writer.start({
      input_tokens: this.#writer.inputTokensEstimate,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 0,
    });
  }

  /**
   * Translates one parsed event.
   *
   * @throws TransportError for `response.failed` and `error` events (the upstream's error, mapped);
   *   `MODEL_EPROTO` for an event after the end, or a tool call that cannot be used.
   */
  push(event: ResponsesStreamEvent): MessageStreamEvent[] {
    this.#writer.checkNotFinished('an event');
    const events = this.start();
    if (!isObject(event)) throw protocolError('a stream event is not a JSON object');
    switch (event.type) {
      case 'response.output_item.added': {
        if (isObject(event.item)) this.#noteItem(this.#itemFor(event, event.item), event.item);
        break;
      }
      case 'response.output_text.delta':
        this.#appendText(this.#itemFor(event), deltaText(event), events);
        break;
      case 'response.refusal.delta':
        this.#sawRefusal = true;
        this.#appendText(this.#itemFor(event), deltaText(event), events);
        break;
      case 'response.reasoning_summary_text.delta':
        this.#appendThinking(this.#itemFor(event), deltaText(event), 'summary', event.summary_index, events);
        break;
      case 'response.reasoning_text.delta':
        this.#appendThinking(this.#itemFor(event), deltaText(event), 'content', event.content_index, events);
        break;
      case 'response.function_call_arguments.delta': {
        const item = this.#itemFor(event);
        item.type ??= 'function_call';
        // A call seen only through its deltas still gets its place among the calls, for error messages.
        if (item.type === 'function_call' && item.position < 0) item.position = this.#callCount++;
        const text = deltaText(event);
        if (text !== '') item.fragments.push(text);
        break;
      }
      case 'response.function_call_arguments.done': {
        const item = this.#itemFor(event);
        if (typeof event['arguments'] === 'string') item.finalArguments = event['arguments'];
        break;
      }
      case 'response.output_item.done': {
        if (!isObject(event.item)) throw protocolError('a response.output_item.done event has no item');
        this.#finishItem(this.#itemFor(event, event.item), event.item, events);
        break;
      }
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed': {
        const response = isObject(event.response) ? event.response : {};
        const status = optionalString(response.status) ?? event.type.slice('response.'.length);
        this.#finish({ ...response, status }, events);
        break;
      }
      case 'error':
        throw mapResponsesError(event);
      default:
        // response.created, response.in_progress, …part.added/done, …text.done, and types added later.
        break;
    }
    return events;
  }

  /**
   * The upstream stream ended. After a terminal event there is nothing to add; without one the model did
   * not finish, and that is an error, not a normal end.
   *
   * @throws TransportError `MODEL_EPROTO` when no terminal event arrived.
   */
  end(): MessageStreamEvent[] {
    if (this.#writer.isFinished) return [];
    throw protocolError(
      'stream ended before the model finished (no response.completed, response.incomplete or response.failed event)',
    );
  }

  // -------------------------------------------------------------------------------------------------

  /** The state of the event's item (by `item_id`, else `output_index`), created on first sight. */
  #itemFor(event: ResponsesStreamEvent, item?: ResponsesOutputItem): ItemState {
    const id = optionalString(event.item_id) ?? optionalString(item?.id);
    let key: string;
    if (id !== undefined) key = id;
    else if (typeof event.output_index === 'number') key = `#${event.output_index}`;
    else {
      // Neither id nor index: a new item when the event announces one, else the latest item.
      const latest = this.#order.at(-1);
      if (item === undefined && latest !== undefined) return latest;
      key = `#${this.#order.length}`;
    }
    let state = this.#items.get(key);
    if (state === undefined) {
      state = {
        key,
        type: undefined,
        streamed: [],
        source: undefined,
        partIndex: undefined,
        isDone: false,
        callId: undefined,
        name: undefined,
        fragments: [],
        finalArguments: undefined,
        position: -1,
        isHeld: false,
      };
      this.#items.set(key, state);
      this.#order.push(state);
    }
    return state;
  }

  /** Takes what an item announces (type, call id, name, arguments sent whole) without overwriting. */
  #noteItem(state: ItemState, item: ResponsesOutputItem): void {
    state.type ??= optionalString(item.type);
    if (state.type === 'function_call') {
      state.callId ??= optionalString(item.call_id);
      state.name ??= optionalString(item.name);
      if (state.position < 0) state.position = this.#callCount++;
      if (state.fragments.length === 0 && typeof item.arguments === 'string' && item.arguments !== '') {
        state.fragments.push(item.arguments);
      }
    }
  }

  #appendText(state: ItemState, text: string, events: MessageStreamEvent[]): void {
    state.type ??= 'message';
    if (text === '') return;
    state.streamed.push(text);
    this.#writer.text(text, state.key, events);
  }

  #appendThinking(
    state: ItemState,
    text: string,
    source: 'summary' | 'content',
    partIndex: number | null | undefined,
    events: MessageStreamEvent[],
  ): void {
    state.type ??= 'reasoning';
    // One kind of text per reasoning item, as `readReasoningItem` takes one: the first kind that arrives.
    if (text === '' || (state.source !== undefined && state.source !== source)) return;
    state.source = source;
    const part = typeof partIndex === 'number' ? partIndex : 0;
    const isNewPart = state.partIndex !== undefined && part !== state.partIndex && state.streamed.length > 0;
    state.partIndex = part;
    this.#emitThinking(state, isNewPart ? `${REASONING_PART_SEPARATOR}${text}` : text, events);
  }

  #emitThinking(state: ItemState, text: string, events: MessageStreamEvent[]): void {
    state.streamed.push(text);
    this.#writer.thinking(text, state.key, events);
  }

  /** An item is complete: add what its final form holds beyond what was streamed, then close or send it. */
  #finishItem(state: ItemState, item: ResponsesOutputItem, events: MessageStreamEvent[]): void {
    if (state.isDone) return;
    this.#noteItem(state, item);
    state.isDone = true;
    switch (state.type) {
      case 'message': {
        const message = readMessageItem(item);
        if (message.sawRefusal) this.#sawRefusal = true;
        const rest = remainder(state.streamed.join(''), message.text);
        if (rest !== '') this.#appendText(state, rest, events);
        if (this.#writer.isOpen(state.key)) this.#writer.closeBlock(events);
        return;
      }
      case 'reasoning': {
        const reasoning = readReasoningItem(item);
        if (state.source === undefined || state.source === reasoning.source) {
          const rest = remainder(state.streamed.join(''), reasoning.text);
          if (rest !== '') {
            state.source = reasoning.source;
            this.#emitThinking(state, rest, events);
          }
        }
        const signature = reasoningSignatureFor(item, state.source ?? reasoning.source);
        if (signature !== '') this.#writer.signature(signature, state.key, events);
        if (this.#writer.isOpen(state.key)) this.#writer.closeBlock(events);
        return;
      }
      case 'function_call': {
        if (item.arguments !== undefined && item.arguments !== null) state.finalArguments = item.arguments;
        this.#resolveCall(state, false, events);
        return;
      }
      case undefined:
      default:
        return;
    }
  }

  /**
   * Sends a complete call whose arguments form a JSON object; holds one whose arguments do not. At the end
   * (`isFinal`), a held call of a response the output limit cut is sent with its arguments completed by
   * appending only (`cutArgumentsCompletion`), as the JSON answer gives it; any other held call fails the
   * stream.
   */
  #resolveCall(state: ItemState, isFinal: boolean, events: MessageStreamEvent[], isCut = false): void {
    const argumentsValue = state.finalArguments ?? state.fragments.join('');
    const pseudoItem: ResponsesOutputItem = {
      ...(state.name === undefined ? {} : { name: state.name }),
      ...(state.callId === undefined ? {} : { call_id: state.callId }),
    };
    const isCompleted = isFinal && isCut;
    let reading: ToolArgumentsReading;
    try {
      reading = readFunctionCall(pseudoItem, argumentsValue, state.position, isCompleted, this.#context);
    } catch (error) {
      if (!isFinal) {
        state.isHeld = true;
        return;
      }
      throw error;
    }
    state.isHeld = false;
    // Whole calls only on this wire, so a repaired or fitted input simply replaces the arguments.
    const json =
      typeof argumentsValue !== 'string'
        ? stringifyExactJson(reading.input)
        : (reading.replacement ?? argumentsValue + reading.completion);
    this.#writer.toolCall(state.callId, state.name!, json, events);
  }

  #finish(response: ResponsesResponse, events: MessageStreamEvent[]): void {
    checkTerminalStatus(response);
    const isCut = wasCut(response, this.#context.maxOutputTokens);

    // Items the stream left unfinished, or never showed, are completed from the terminal response.
    const output = Array.isArray(response.output) ? response.output : [];
    output.forEach((item, outputIndex) => {
      if (!isObject(item)) return;
      const state = this.#itemFor({ type: 'response.output_item.done', output_index: outputIndex }, item);
      if (!state.isDone) this.#finishItem(state, item, events);
    });
    for (const state of this.#order) {
      if (state.type === 'function_call' && !state.isDone) {
        state.isDone = true;
        this.#resolveCall(state, false, events);
      }
    }
    for (const state of this.#order) {
      if (state.isHeld) this.#resolveCall(state, true, events, isCut);
    }
    const stopReason = responsesStopReason(
      response,
      this.#context.maxOutputTokens,
      this.#sawRefusal,
      this.#writer.sawToolUse,
    );
    const usage = mapResponsesUsage(isObject(response.usage) ? response.usage : undefined);
    this.#writer.finish(stopReason, usage, events);
  }
}

/** A delta's text: strings as they are; anything else carries no text. */
function deltaText(event: ResponsesStreamEvent): string {
  return typeof event.delta === 'string' ? event.delta : '';
}

/** What `full` adds to what was streamed, when the streamed text is its beginning; else nothing. */
function remainder(streamed: string, full: string): string {
  return full.length > streamed.length && full.startsWith(streamed) ? full.slice(streamed.length) : '';
}
