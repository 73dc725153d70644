/**
 * Translates a Chat Completions stream (parsed chunks) into Messages stream events (docs/protocol.md D.4):
 * the Chat Completions chunk decoder, an explicit, I/O-free state machine, `StreamTranslator`
 * (`translateStream` drives it over an async iterable). It reads the chunks; the Messages events are
 * written by the stream writer both wires share (`MessageStreamWriter`: one open block at a time, tool
 * ids, usage, the end), and the tool calls it assembles from fragments are kept by `StreamToolCalls`.
 *
 * Chat Completions streams interleave reasoning, text and any number of parallel tool calls, each server
 * in its own dialect (Part C). The decoder therefore:
 *
 * - sends reasoning (`thinking` blocks) and text live;
 * - streams the first tool call live, one `input_json_delta` per upstream fragment, as long as its
 *   block stays open; every other tool call is buffered and flushed whole at the end (one
 *   `content_block_start`, one `input_json_delta` with all its arguments, one `content_block_stop`), in
 *   index order — so interleaved parallel calls never need a block to be reopened;
 * - opens a tool block only once the call's name is known (fragments wait until then);
 * - validates at the end that every call's arguments form a JSON object; after `length`, a call the
 *   token limit cut gets the closing suffix `completeCutJson` computes, as one more `input_json_delta`
 *   before its `content_block_stop`, so the stream carries the same input `translateResponse` gives.
 *
 * Cost is linear in the stream: fragments are kept in arrays and joined once, at the end.
 *
 * @module
 */
import type { ChatCompletionChunk, ChatCompletionUsage } from '../protocol/chat-completions.js';
import type { MessageStreamEvent } from '../protocol/messages.js';
import { isObject } from '../protocol/is-object.js';
import { mapStreamErrorObject } from './map-stream-error-object.js';
import { mapUsage } from './map-usage.js';
import { MessageStreamWriter, type StreamContext } from './message-stream-writer.js';
import { excerpt, optionalString, protocolError } from './protocol-error.js';
import { describeToolCall, readToolArguments, type ToolReading } from './read-tool-input.js';
import {
  argumentsFragment,
  StreamToolCalls,
  toolCallDescription,
  type StreamToolCall,
} from './stream-tool-calls.js';
import { finishedWithError, readContentParts, readReasoning, stopReasonFor } from './translate-response.js';

export type { StreamContext } from './message-stream-writer.js';

/**
 * The Chat Completions stream translation state machine. Feed it `start()`, then `push(chunk)` for each
 * parsed chunk, then `finish(sawDone)`; each returns the Messages events to send, in order.
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
  readonly #writer: MessageStreamWriter;
  #finishReason: string | undefined;
  #usage: ChatCompletionUsage | undefined;
  #sawRefusal = false;
  readonly #calls = new StreamToolCalls();

  readonly #tools: ToolReading;

  constructor(context: StreamContext) {
    this.#writer = new MessageStreamWriter(context);
    this.#tools = context;
  }

  /** Events to emit before any chunk (`message_start`). Call once, first; later calls return `[]`. */
  start(): MessageStreamEvent[] {
    return this.#writer.start({ input_tokens: this.#writer.inputTokensEstimate, output_tokens: 0 });
  }

  /**
   * Translates one parsed chunk.
   *
   * @throws TransportError `MODEL_EHTTP` for an error chunk (quirks 17, 18, via `mapStreamErrorObject`);
   *   `MODEL_EPROTO` for a chunk that is not a chunk, or one that adds arguments to a tool call whose
   *   block was already closed.
   */
  push(chunk: ChatCompletionChunk): MessageStreamEvent[] {
    this.#writer.checkNotFinished('a chunk');
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
    this.#pushDelta(delta, events);
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
    if (this.#writer.isFinished) throw protocolError('the stream was already finished');
    const events = this.start();
    if (this.#finishReason === 'error') throw finishedWithError();
    if (this.#finishReason === undefined && !sawDone) {
      throw protocolError('stream ended before the model finished (no finish_reason and no [DONE])');
    }
    const calls = this.#checkedToolCalls();

    const live = calls.find((call) => this.#writer.isOpen(call));
    if (live !== undefined && live.completion !== '') this.#writer.inputJson(live.completion, events);
    this.#writer.closeBlock(events);
    const pending = calls.filter((call) => call.state === 'pending');
    pending.sort((a, b) => a.order - b.order || a.sequence - b.sequence);
    for (const call of pending) {
      this.#calls.removeFromPending();
      call.state = 'opened';
      this.#writer.toolCall(call.providerId, call.name!, call.completion, events);
    }

    const stopReason = stopReasonFor(this.#finishReason, this.#sawRefusal, this.#writer.sawToolUse);
    this.#writer.finish(stopReason, this.#usage === undefined ? undefined : mapUsage(this.#usage), events);
    return events;
  }

  // -------------------------------------------------------------------------------------------------

  #pushDelta(delta: Record<string, unknown>, events: MessageStreamEvent[]): void {
    this.#writer.thinking(readReasoning(delta), undefined, events);
    for (const part of readContentParts(delta['content'], 'delta.content of a stream chunk')) {
      if (part.kind === 'thinking') this.#writer.thinking(part.text, undefined, events);
      else this.#writer.text(part.text, undefined, events);
    }
    const refusal = optionalString(delta['refusal']);
    if (refusal !== undefined) {
      this.#sawRefusal = true;
      this.#writer.text(refusal, undefined, events);
    }

    const toolCalls: unknown = delta['tool_calls'];
    if (toolCalls === undefined || toolCalls === null) return;
    if (!Array.isArray(toolCalls))
      throw protocolError('a stream chunk has "tool_calls" that is not an array');
    for (const toolCall of toolCalls) {
      if (!isObject(toolCall)) throw protocolError('a stream chunk has a tool call that is not an object');
      this.#appendToolCall(toolCall, events);
    }
  }

  /** Whether a call's block was opened and has been closed since: it can take no more arguments. */
  #isClosed(call: StreamToolCall): boolean {
    return call.state === 'opened' && !this.#writer.isOpen(call);
  }

  #appendToolCall(toolCall: Record<string, unknown>, events: MessageStreamEvent[]): void {
    const callFunction = isObject(toolCall['function']) ? toolCall['function'] : undefined;
    const id = optionalString(toolCall['id']);
    const name = optionalString(callFunction?.['name']);
    const call = this.#calls.receive(toolCall['index'], id, name);

    const fragment = argumentsFragment(callFunction?.['arguments']);
    if (this.#isClosed(call)) {
      if (fragment !== '') {
        throw protocolError(
          `${describeToolCall(toolCallDescription(call))} received more arguments after its block was closed`,
        );
      }
      return;
    }
    if (fragment !== '') call.fragments.push(fragment);
    if (call.state === 'opened') {
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
    return call.name !== undefined && !this.#writer.isToolBlockOpen && this.#calls.pendingCount === 1;
  }

  #openLive(call: StreamToolCall, events: MessageStreamEvent[]): void {
    this.#calls.removeFromPending();
    call.state = 'opened';
    this.#writer.openToolBlock(call.providerId, call.name!, call, events);
    if (call.fragments.length > 0) this.#appendLive(call, call.fragments.join(''), events);
  }

  /**
   * Sends a live call's fragment as far as it surely begins a JSON object (`JsonPrefixReader`): leading
   * whitespace is held back until real content arrives, so a call whose arguments are only whitespace
   * leaves the client with `{}` rather than an unparseable `"  "`; a `,` waits for what follows it; and
   * once the arguments stop being JSON, the rest is held for the repair at the end, which can then still
   * append to what was sent instead of having to take it back.
   */
  #appendLive(call: StreamToolCall, fragment: string, events: MessageStreamEvent[]): void {
    call.held += fragment;
    if (call.prefix === undefined) return;
    if (!call.prefix.append(fragment)) {
      call.prefix = undefined;
      return;
    }
    const sendable = call.prefix.safeLength - call.sentLength;
    if (sendable <= 0) return;
    this.#writer.inputJson(call.held.slice(0, sendable), events);
    call.held = call.held.slice(sendable);
    call.sentLength += sendable;
  }

  /**
   * The calls to emit, after checking each: it needs a name, and its arguments must give a JSON object
   * (`readToolArguments`: repaired, fitted to the tool's schema, and after a `length` cut completed, which
   * only a call still open can be). Each call's `completion` is set to what it still needs (see
   * {@link remainderFor}). A call that carried nothing at all (no id, name or arguments) is dropped: there
   * is nothing to show or to answer.
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
      const description = toolCallDescription(call);
      const reading = readToolArguments(text, description, {
        isCut: isCut && !this.#isClosed(call),
        schema: call.name === undefined ? undefined : this.#tools.toolSchemas?.get(call.name),
        onRepair: this.#tools.onRepair,
      });
      const delivered = reading.replacement ?? text + reading.completion;
      if (call.state === 'pending') {
        call.completion = delivered;
      } else {
        const candidates = [delivered, reading.unfitted ?? delivered];
        call.completion = remainderFor(call, text, candidates, this.#isClosed(call));
      }
      calls.push(call);
    }
    return calls;
  }
}

/**
 * What an opened call's block still needs so that what it sent reads as the first of `candidates` that
 * begins with it (the fitted input first, then the input only repaired): the rest of that text — nothing
 * for a block already closed, which can take no more.
 *
 * @throws TransportError `MODEL_EPROTO` naming the call when none does: the part already streamed cannot
 *   be taken back, and the client must not assemble an input nobody meant.
 */
function remainderFor(
  call: StreamToolCall,
  text: string,
  candidates: readonly string[],
  isClosed: boolean,
): string {
  const sent = text.slice(0, call.sentLength);
  for (const candidate of candidates) {
    if (!candidate.startsWith(sent)) continue;
    const remainder = candidate.slice(sent.length);
    // Whitespace reads the same sent or not (and a blank input must stay blank, which is `{}`); a closed
    // block can take nothing else.
    if (!/\S/.test(remainder)) return '';
    if (!isClosed) return remainder;
  }
  throw protocolError(
    `${describeToolCall(toolCallDescription(call))} has arguments that needed a repair after part of them ` +
      `was already streamed, which cannot be taken back: ${excerpt(text)}`,
  );
}
