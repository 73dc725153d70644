/**
 * Translates a Chat Completions stream (parsed chunks) into Messages stream events (PROTOCOLS.md D.4):
 * an explicit, I/O-free state machine, `StreamTranslator` (`translateStream` drives it over an async
 * iterable). The tool calls it assembles from fragments are kept by `StreamToolCalls`.
 *
 * The Messages stream allows one open content block at a time, numbered 0, 1, 2… in order (A.7); Chat
 * Completions streams interleave reasoning, text and any number of parallel tool calls, each server in
 * its own dialect (Part C). The translator therefore:
 *
 * - emits reasoning (`thinking` blocks) and text live, closing whatever block is open first;
 * - streams the first tool call live, one `input_json_delta` per upstream fragment, as long as its
 *   block stays open; every other tool call is buffered and flushed whole at the end (one
 *   `content_block_start`, one `input_json_delta` with all its arguments, one `content_block_stop`), in
 *   index order — so interleaved parallel calls never need a block to be reopened;
 * - opens a tool block only once the call's name is known (fragments wait until then);
 * - assigns tool ids with the tool-id codec when a block is opened, in block order, so repeated provider
 *   ids get the occurrence numbers `encodeToolIds` gives the same calls in a non-streaming response;
 * - validates at the end that every call's arguments form a JSON object; after `length`, a call the
 *   token limit cut gets the closing suffix `completeCutJson` computes, as one more `input_json_delta`
 *   before its `content_block_stop`, so the stream carries the same input `translateResponse` gives.
 *
 * Cost is linear in the stream: fragments are kept in arrays and joined once, at the end.
 *
 * @module
 */
import type { ChatCompletionChunk, ChatCompletionUsage } from '../protocol/chat-completions.js';
import type { MessageDeltaUsage, MessageStreamEvent } from '../protocol/messages.js';
import { isObject } from '../protocol/is-object.js';
import { mapStreamErrorObject } from './map-stream-error-object.js';
import { mapUsage } from './map-usage.js';
import { encodeToolId } from './tool-id-codec.js';
import {
  argumentsFragment,
  StreamToolCalls,
  toolCallDescription,
  type StreamToolCall,
} from './stream-tool-calls.js';
import {
  cutArgumentsCompletion,
  describeToolCall,
  finishedWithError,
  messageIdFor,
  optionalString,
  parseToolArgumentsText,
  protocolError,
  readContentParts,
  readReasoning,
  stopReasonFor,
  type ResponseContext,
} from './translate-response.js';

/** What the stream translator needs: the response context, plus an optional input-token estimate. */
export type StreamContext = ResponseContext & {
  /** Sent as `message_start.usage.input_tokens` (the real count only arrives at the end). @default 0 */
  inputTokensEstimate?: number | undefined;
};

type Phase = 'created' | 'started' | 'finished';

type OpenBlock =
  { kind: 'text' | 'thinking'; index: number } | { kind: 'tool_use'; index: number; call: StreamToolCall };

/**
 * The stream translation state machine. Feed it `start()`, then `push(chunk)` for each parsed chunk, then
 * `finish(sawDone)`; each returns the Messages events to send, in order.
 *
 * @example
 * ```ts
 * const translator = new StreamTranslator({ requestModel, toolNames, generateId });
 * send(translator.start());
 * for await (const chunk of chunks) send(translator.push(chunk));
 * send(translator.finish(sawDone));
 * ```
 */
export class StreamTranslator {
  readonly #context: StreamContext;
  readonly #messageId: string;
  #phase: Phase = 'created';
  #open: OpenBlock | undefined;
  #nextBlockIndex = 0;
  #finishReason: string | undefined;
  #usage: ChatCompletionUsage | undefined;
  #sawRefusal = false;
  readonly #calls = new StreamToolCalls();
  #sawToolUse = false;
  readonly #idOccurrences = new Map<string, number>();

  constructor(context: StreamContext) {
    this.#context = context;
    // message_start goes out before any chunk, so the upstream id is not known yet: always generate.
    this.#messageId = messageIdFor(undefined, context.generateId);
  }

  /** Events to emit before any chunk (`message_start`). Call once, first; later calls return `[]`. */
  start(): MessageStreamEvent[] {
    if (this.#phase !== 'created') return [];
    this.#phase = 'started';
    return [
      {
        type: 'message_start',
        message: {
          id: this.#messageId,
          type: 'message',
          role: 'assistant',
          model: this.#context.requestModel,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: this.#context.inputTokensEstimate ?? 0, output_tokens: 0 },
        },
      },
    ];
  }

  /**
   * Translates one parsed chunk.
   *
   * @throws TransportError `MODEL_EHTTP` for an error chunk (quirks 17, 18, via `mapStreamErrorObject`);
   *   `MODEL_EPROTO` for a chunk that is not a chunk, or one that adds arguments to a tool call whose
   *   block was already closed.
   */
  push(chunk: ChatCompletionChunk): MessageStreamEvent[] {
    if (this.#phase === 'finished') throw protocolError('a chunk arrived after the end of the stream');
    const events = this.start();
    if (!isObject(chunk)) throw protocolError('a stream chunk is not a JSON object');
    if (chunk['error'] !== undefined && chunk['error'] !== null) throw mapStreamErrorObject(chunk, 'tpx');

    // Usage may come in the finish chunk, a separate `choices: []` chunk, or a chunk with non-empty
    // choices (quirks 7, 8, 9); the last one seen is the total.
    const usage: unknown = chunk['usage'];
    if (isObject(usage)) this.#usage = usage;

    const choices: unknown = chunk['choices'];
    if (choices === undefined || choices === null) return events;
    if (!Array.isArray(choices)) throw protocolError('a stream chunk has "choices" that is not an array');
    // Choice 0 only (n > 1 has no Messages shape). `choices: []` (usage chunks, Azure's
    // prompt_filter_results chunk, quirk 19) has nothing to translate.
    const choice: unknown = choices.find(
      (candidate: unknown) =>
        isObject(candidate) &&
        (candidate['index'] === undefined || candidate['index'] === null || candidate['index'] === 0),
    );
    if (!isObject(choice)) return events;

    const finishReason = optionalString(choice['finish_reason']);
    if (finishReason !== undefined) this.#finishReason = finishReason;

    const delta: unknown = choice['delta'];
    if (delta === undefined || delta === null) return events;
    if (!isObject(delta)) throw protocolError('a stream chunk has a "delta" that is not an object');

    this.#appendThinking(readReasoning(delta), events);
    for (const part of readContentParts(delta['content'], 'delta.content of a stream chunk')) {
      if (part.kind === 'thinking') this.#appendThinking(part.text, events);
      else this.#appendText(part.text, events);
    }
    const refusal = optionalString(delta['refusal']);
    if (refusal !== undefined) {
      this.#sawRefusal = true;
      this.#appendText(refusal, events);
    }

    const toolCalls: unknown = delta['tool_calls'];
    if (toolCalls !== undefined && toolCalls !== null) {
      if (!Array.isArray(toolCalls))
        throw protocolError('a stream chunk has "tool_calls" that is not an array');
      for (const toolCall of toolCalls) {
        if (!isObject(toolCall)) throw protocolError('a stream chunk has a tool call that is not an object');
        this.#appendToolCall(toolCall, events);
      }
    }
    return events;
  }

  /**
   * End of input: closes the open block, flushes buffered tool calls, and emits `message_delta` and
   * `message_stop`.
   *
   * @param sawDone whether the upstream sent `data: [DONE]`
   * @throws TransportError `MODEL_EPROTO` when the stream ended with neither a finish reason nor `[DONE]`
   *   ("stream ended before the model finished"), or when a tool call has no name or arguments that are
   *   not a JSON object; `MODEL_EHTTP` for `finish_reason: "error"`.
   */
  finish(sawDone: boolean): MessageStreamEvent[] {
    if (this.#phase === 'finished') throw protocolError('the stream was already finished');
    const events = this.start();
    if (this.#finishReason === 'error') throw finishedWithError();
    if (this.#finishReason === undefined && !sawDone) {
      throw protocolError('stream ended before the model finished (no finish_reason and no [DONE])');
    }
    const calls = this.#checkedToolCalls();
    this.#phase = 'finished';

    const open = this.#open;
    if (open?.kind === 'tool_use' && open.call.completion !== '') {
      events.push({
        type: 'content_block_delta',
        index: open.index,
        delta: { type: 'input_json_delta', partial_json: open.call.completion },
      });
    }
    this.#closeOpenBlock(events);
    const pending = calls.filter((call) => call.state === 'pending');
    pending.sort((a, b) => a.order - b.order || a.sequence - b.sequence);
    for (const call of pending) this.#flushToolCall(call, events);

    const stopReason = stopReasonFor(this.#finishReason, this.#sawRefusal, this.#sawToolUse);
    events.push(
      {
        type: 'message_delta',
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: this.#finalUsage(),
      },
      { type: 'message_stop' },
    );
    return events;
  }

  // -------------------------------------------------------------------------------------------------

  #appendThinking(text: string, events: MessageStreamEvent[]): void {
    if (text === '') return;
    const index = this.#ensureBlock('thinking', events);
    events.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: text } });
  }

  #appendText(text: string, events: MessageStreamEvent[]): void {
    if (text === '') return;
    const index = this.#ensureBlock('text', events);
    events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
  }

  /** The index of an open block of this kind, opening one (and closing the current one) if needed. */
  #ensureBlock(kind: 'text' | 'thinking', events: MessageStreamEvent[]): number {
    if (this.#open?.kind === kind) return this.#open.index;
    this.#closeOpenBlock(events);
    const index = this.#nextBlockIndex++;
    events.push({
      type: 'content_block_start',
      index,
      content_block:
        kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' },
    });
    this.#open = { kind, index };
    return index;
  }

  #closeOpenBlock(events: MessageStreamEvent[]): void {
    if (this.#open === undefined) return;
    if (this.#open.kind === 'tool_use') this.#open.call.state = 'closed';
    events.push({ type: 'content_block_stop', index: this.#open.index });
    this.#open = undefined;
  }

  #appendToolCall(toolCall: Record<string, unknown>, events: MessageStreamEvent[]): void {
    const callFunction = isObject(toolCall['function']) ? toolCall['function'] : undefined;
    const id = optionalString(toolCall['id']);
    const name = optionalString(callFunction?.['name']);
    const call = this.#calls.receive(toolCall['index'], id, name);

    const fragment = argumentsFragment(callFunction?.['arguments']);
    if (call.state === 'closed') {
      if (fragment !== '') {
        throw protocolError(
          `${describeToolCall(toolCallDescription(call))} received more arguments after its block was closed`,
        );
      }
      return;
    }
    if (fragment !== '') call.fragments.push(fragment);
    if (call.state === 'live') {
      if (fragment !== '') this.#appendLive(call, fragment, events);
      return;
    }
    if (this.#canGoLive(call)) this.#openLive(call, events);
  }

  /**
   * Whether a pending call may stream live: its name is known, no tool block is open, and no other call
   * is waiting (a waiting call must not be overtaken, nor would it have a block to stream into).
   */
  #canGoLive(call: StreamToolCall): boolean {
    return call.name !== undefined && this.#open?.kind !== 'tool_use' && this.#calls.pendingCount === 1;
  }

  #openLive(call: StreamToolCall, events: MessageStreamEvent[]): void {
    const index = this.#openToolBlock(call, events);
    call.state = 'live';
    this.#open = { kind: 'tool_use', index, call };
    const pending = call.fragments;
    if (pending.some((fragment) => /\S/.test(fragment))) {
      this.#sendArguments(call, index, pending.join(''), events);
    } else {
      call.unsent.push(...pending);
    }
  }

  /**
   * Sends a live call's fragment. Leading whitespace-only fragments are held back until real content
   * arrives, so a call whose arguments are only whitespace leaves the client with `{}` rather than an
   * unparseable `"  "`.
   */
  #appendLive(call: StreamToolCall, fragment: string, events: MessageStreamEvent[]): void {
    const index = this.#open!.index;
    if (call.sentContent) {
      events.push({
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: fragment },
      });
    } else if (/\S/.test(fragment)) {
      call.unsent.push(fragment);
      this.#sendArguments(call, index, call.unsent.join(''), events);
      call.unsent = [];
    } else {
      call.unsent.push(fragment);
    }
  }

  #sendArguments(call: StreamToolCall, index: number, text: string, events: MessageStreamEvent[]): void {
    events.push({
      type: 'content_block_delta',
      index,
      delta: { type: 'input_json_delta', partial_json: text },
    });
    call.sentContent = true;
  }

  #flushToolCall(call: StreamToolCall, events: MessageStreamEvent[]): void {
    const index = this.#openToolBlock(call, events);
    const text = call.fragments.join('') + call.completion;
    if (/\S/.test(text)) {
      events.push({
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: text },
      });
    }
    events.push({ type: 'content_block_stop', index });
    call.state = 'closed';
  }

  /** Emits `content_block_start` for a call (closing the open block) and returns its block index. */
  #openToolBlock(call: StreamToolCall, events: MessageStreamEvent[]): number {
    this.#closeOpenBlock(events);
    this.#calls.removeFromPending();
    this.#sawToolUse = true;
    const index = this.#nextBlockIndex++;
    events.push({
      type: 'content_block_start',
      index,
      content_block: {
        type: 'tool_use',
        id: this.#encodeId(call.providerId),
        name: this.#context.toolNames.fromUpstream(call.name!),
        input: {},
      },
    });
    return index;
  }

  /** The codec's id for the next block, counting repeats of a provider id in block order. */
  #encodeId(providerId: string | undefined): string {
    if (providerId === undefined) return encodeToolId(undefined, 1, this.#context.generateId);
    const occurrence = (this.#idOccurrences.get(providerId) ?? 0) + 1;
    this.#idOccurrences.set(providerId, occurrence);
    return encodeToolId(providerId, occurrence, this.#context.generateId);
  }

  /**
   * The calls to emit, after checking each: it needs a name, and its arguments must form a JSON object —
   * after a `length` cut, once completed (`cutArgumentsCompletion`), which only a call still open can be.
   * A call that carried nothing at all (no id, name or arguments) is dropped: there is nothing to show
   * or to answer.
   */
  #checkedToolCalls(): StreamToolCall[] {
    const isCut = this.#finishReason === 'length';
    const calls: StreamToolCall[] = [];
    for (const call of this.#calls.all) {
      if (call.state === 'pending' && call.name === undefined) {
        if (call.providerId === undefined && !call.fragments.some((fragment) => /\S/.test(fragment))) {
          this.#calls.removeFromPending();
          continue;
        }
        throw protocolError(`${describeToolCall(toolCallDescription(call))} never received a function name`);
      }
      const text = call.fragments.join('');
      if (isCut && call.state !== 'closed') {
        call.completion = cutArgumentsCompletion(text, toolCallDescription(call));
      } else {
        parseToolArgumentsText(text, toolCallDescription(call));
      }
      calls.push(call);
    }
    return calls;
  }

  #finalUsage(): MessageDeltaUsage {
    if (this.#usage === undefined) {
      return {
        output_tokens: 0,
        input_tokens: this.#context.inputTokensEstimate ?? 0,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      };
    }
    const usage = mapUsage(this.#usage);
    return {
      output_tokens: usage.output_tokens,
      input_tokens: usage.input_tokens,
      cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
    };
  }
}
