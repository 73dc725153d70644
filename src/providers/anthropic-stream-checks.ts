/**
 * The checks a native Messages stream passes on its way to the caller: each event valid on its own, the
 * events in the stream's order (`createStreamGrammar`; a `ping` before `message_start` is dropped), tool
 * ids unique, tool input a JSON object (or cut by the token limit, then completed), and the repairs
 * llama.cpp's `/v1/messages` stream needs. The
 * stream is read through `translateStream`, with these checks as its steps: they pass events on rather
 * than translate them.
 *
 * @module
 */
import { TransportError } from '../errors.js';
import type { MessageStreamEvent } from '../protocol/messages.js';
import { isObject } from '../protocol/is-object.js';
import { createStreamGrammar } from '../protocol/stream-grammar.js';
import { isKnownEventType, validateStreamEvent } from '../protocol/validate-messages.js';
import { completeCutJson } from '../translate/complete-cut-json.js';
import type { StreamSteps } from '../translate/translate-stream.js';
import { duplicateToolId, errorInAnswer } from './anthropic-answer.js';
import type { SseMessage } from './read-sse.js';
import { parseUpstreamJson } from './upstream-answer.js';

/** Whether joined `input_json_delta` fragments form a tool input: a JSON object, or nothing at all. */
function isToolInput(text: string): boolean {
  if (!/\S/.test(text)) return true;
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value);
  } catch {
    return false;
  }
}

/**
 * llama.cpp's `/v1/messages` stream (b11669) opens a `tool_use` block without the `input: {}` that
 * Anthropic sends (the input arrives only as `input_json_delta` fragments, as it always does). Such a
 * block is read as carrying that empty input, so the caller gets the documented event shape.
 */
function withEmptyToolInput(payload: unknown): unknown {
  const event = payload as { type?: unknown; content_block?: unknown } | null;
  if (event?.type !== 'content_block_start') return payload;
  const block = event.content_block as { type?: unknown; input?: unknown } | null | undefined;
  if (typeof block !== 'object' || block === null || block.type !== 'tool_use' || 'input' in block)
    return payload;
  return { ...event, content_block: { ...block, input: {} } };
}

function unreadableToolInput(input: { index: number; text: string }): TransportError {
  const shown = input.text.length <= 100 ? input.text : `${input.text.slice(0, 100)}…`;
  return new TransportError(
    'MODEL_EPROTO',
    `the anthropic stream sent tool input for block ${input.index} that is not a JSON object: ${JSON.stringify(shown)}`,
    { provider: 'anthropic' },
  );
}

function protocolError(message: string): TransportError {
  return new TransportError('MODEL_EPROTO', message, { provider: 'anthropic' });
}

/**
 * The event one server-sent event carries, valid; `undefined` for one to skip (no data, or a type the
 * protocol added later). An `error` event is thrown as the error it carries: retried like the status it
 * stands for when nothing reached the caller yet (an overloaded_error first is a 529, docs/protocol.md A.7);
 * the transport never retries once events were delivered.
 */
function readEvent(sse: SseMessage): MessageStreamEvent | undefined {
  const data = sse.data.trim();
  if (data === '') return undefined;
  const payload = withEmptyToolInput(parseUpstreamJson(data, 'stream event', 'anthropic'));
  const type = (payload as { type?: unknown } | null)?.type;
  if (typeof type === 'string' && !isKnownEventType(type)) return undefined;
  const validated = validateStreamEvent(payload);
  if (!validated.ok) throw protocolError(`the anthropic stream sent an invalid event: ${validated.message}`);
  const event = validated.value;
  if (event.type === 'error') throw errorInAnswer(event.error, 'stream');
  return event;
}

/** The checks of one native stream, as `translateStream` steps: one server-sent event at a time. */
export class AnthropicStreamChecks implements StreamSteps<SseMessage> {
  readonly #grammar = createStreamGrammar();
  readonly #toolIds = new Set<string>();
  /** The input fragments of each open tool block, by block index. */
  readonly #toolInputs = new Map<number, string[]>();
  /** The tool input the token limit may have cut: only a `max_tokens` stop lets it stand. */
  #brokenInput: { index: number; text: string } | undefined;
  /** The block open now, and blocks closed before the server closed them (see `#deliver`). */
  #openBlock: number | undefined;
  readonly #closedEarly = new Set<number>();
  #hasStarted = false;
  #isFinished = false;

  /** Whether `message_stop` went out: nothing more is read. */
  get isFinished(): boolean {
    return this.#isFinished;
  }

  /** A native stream carries its own `message_start`: nothing to add before it. */
  start(): MessageStreamEvent[] {
    return [];
  }

  /** The events to deliver for one server-sent event (none to skip it). */
  push(sse: SseMessage): MessageStreamEvent[] {
    const event = readEvent(sse);
    if (event === undefined) return [];
    const delivered: MessageStreamEvent[] = [];
    this.#deliver(event, delivered);
    if (delivered.at(-1)?.type === 'message_stop') this.#isFinished = true;
    return delivered;
  }

  end(): never {
    throw new TransportError('MODEL_EPROTO', 'the anthropic stream ended before message_stop', {
      provider: 'anthropic',
      retryable: false,
    });
  }

  /** Applies the stream's rules to one valid event, adding what to deliver to `delivered`. */
  #deliver(event: MessageStreamEvent, delivered: MessageStreamEvent[]): void {
    // Some Messages-compatible servers send a keep-alive ping as soon as the stream opens, before
    // message_start. It carries nothing, and the caller's stream must begin with message_start
    // (docs/protocol.md A.7), so it is dropped rather than refused as out of order.
    if (event.type === 'ping' && !this.#hasStarted) return;
    if (event.type === 'message_start') this.#hasStarted = true;
    if (event.type === 'content_block_start' && this.#openBlock !== undefined) {
      // llama.cpp's `/v1/messages` stream (b11669) starts the next block without stopping the open one
      // and sends every content_block_stop at the end. Blocks follow one another there, never
      // interleave, so the open one is stopped here and its late stop dropped: one block open at a
      // time, as the Messages stream grammar and its clients expect.
      const index = this.#openBlock;
      this.#deliver({ type: 'content_block_stop', index }, delivered);
      this.#closedEarly.add(index);
    }
    if (event.type === 'content_block_stop' && this.#closedEarly.delete(event.index)) return;
    this.#checkToolInput(event, delivered);
    const violation = this.#grammar.accept(event);
    if (violation !== undefined)
      throw protocolError(`the anthropic stream broke the event order: ${violation}`);
    if (event.type === 'content_block_start') this.#openBlock = event.index;
    else if (event.type === 'content_block_stop') this.#openBlock = undefined;
    delivered.push(event);
  }

  /** Keeps each tool block's input, and checks it when the block ends and when the message does. */
  #checkToolInput(event: MessageStreamEvent, delivered: MessageStreamEvent[]): void {
    if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
      const id = (event.content_block as { id: string }).id;
      if (this.#toolIds.has(id)) throw duplicateToolId(id);
      this.#toolIds.add(id);
      this.#toolInputs.set(event.index, []);
    } else if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta') {
      this.#toolInputs.get(event.index)?.push(event.delta.partial_json);
    } else if (event.type === 'content_block_stop') {
      this.#endToolInput(event.index, delivered);
    } else if (event.type === 'message_delta' && this.#brokenInput !== undefined) {
      // The token limit may cut a tool call's JSON, as it does for any text; any other ending means the
      // upstream sent a tool call whose input cannot be read (A.7: the fragments form one JSON object).
      if (event.delta.stop_reason !== 'max_tokens') throw unreadableToolInput(this.#brokenInput);
    }
  }

  /**
   * At the end of block `index`: a tool input that is not a JSON object is completed by appending only,
   * as on the tpx path (`complete-cut-json.ts`): one more fragment before the block ends, so the message
   * accumulates. Whether a cut was allowed is settled at message_delta: only `max_tokens` may cut a tool
   * call. Input that no suffix makes an object, or a second cut input (the limit cuts once), is refused
   * at once.
   */
  #endToolInput(index: number, delivered: MessageStreamEvent[]): void {
    const fragments = this.#toolInputs.get(index);
    this.#toolInputs.delete(index);
    const text = fragments?.join('') ?? '';
    if (fragments === undefined || isToolInput(text)) return;
    const suffix = completeCutJson(text);
    if (suffix === undefined || this.#brokenInput !== undefined) throw unreadableToolInput({ index, text });
    this.#brokenInput = { index, text };
    if (suffix === '') return;
    const completion: MessageStreamEvent = {
      type: 'content_block_delta',
      index,
      delta: { type: 'input_json_delta', partial_json: suffix },
    };
    this.#deliver(completion, delivered);
  }
}
