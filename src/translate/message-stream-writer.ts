/**
 * The Messages side of stream translation, shared by both wires' decoders (the Chat Completions chunk
 * decoder `StreamTranslator`, the Responses event decoder `ResponsesStreamTranslator`): it writes the
 * Messages stream events (docs/protocol.md A.7) while a decoder reads its wire. I/O-free.
 *
 * It keeps the rules every translated stream obeys, whatever the wire:
 *
 * - `message_start` once, first, with a fresh message id (the upstream id is not known yet);
 * - one open content block at a time, numbered 0, 1, 2… in order: text, thinking and a tool block that
 *   streams its input live each close whatever block is open before they open;
 * - a tool block's id comes from the tool-id codec's issuer when the block opens, counting repeats of a
 *   provider id in block order, so a stream numbers repeated ids as `encodeToolIds` numbers them in a
 *   whole answer;
 *   its name goes back through the request's tool-name map;
 * - nothing after `message_stop`: the end closes the open block, then sends `message_delta` (the stop
 *   reason the decoder determined, and the usage: the upstream's, else the input estimate) and
 *   `message_stop`;
 * - when tool calls written as text are read (`textToolCalls`), text goes through a
 *   `TextToolCallScanner`: what can still become a call is held back; anything else opening flushes it as
 *   text; at the end, held calls become tool blocks (and `end_turn` becomes `tool_use`), as
 *   `assembleMessage` reads the last text block of a whole answer.
 *
 * A decoder says which block a piece belongs to with a key of its own (an upstream output item, a tool
 * call); pieces with the same kind and key go into one block for as long as it stays open.
 *
 * @module
 */
import type { MessageDeltaUsage, MessageStreamEvent, StopReason, Usage } from '../protocol/messages.js';
import { messageIdFor, textCallInput, type ResponseContext } from './assemble-message.js';
import { protocolError } from './protocol-error.js';
import { TextToolCallScanner } from './text-tool-calls.js';
import { createToolIdIssuer } from './tool-id-codec.js';

/** What a stream writer needs: the response context, plus an optional input-token estimate. */
export type StreamContext = ResponseContext & {
  /** Sent as `message_start.usage.input_tokens` (the real count only arrives at the end). @default 0 */
  inputTokensEstimate?: number | undefined;
};

type Phase = 'created' | 'started' | 'finished';

interface OpenBlock {
  kind: 'text' | 'thinking' | 'tool_use';
  index: number;
  key: unknown;
}

/**
 * Writes one Messages stream. Each method appends the events it produces to the `events` array it is
 * given (the decoder's output for the upstream item at hand).
 */
export class MessageStreamWriter {
  readonly #context: StreamContext;
  readonly #messageId: string;
  #phase: Phase = 'created';
  #open: OpenBlock | undefined;
  #nextBlockIndex = 0;
  #sawToolUse = false;
  readonly #issueToolId: (providerId: string | undefined) => string;
  /** The text block being read for calls written as text, and its key. */
  #scan: { scanner: TextToolCallScanner; key: unknown } | undefined;

  constructor(context: StreamContext) {
    this.#context = context;
    // message_start goes out before any upstream data, so the upstream id is not known yet: always generate.
    this.#messageId = messageIdFor(undefined, context.generateId);
    this.#issueToolId = createToolIdIssuer(context.generateId);
  }

  /** Whether the stream ended (`message_stop` was written). */
  get isFinished(): boolean {
    return this.#phase === 'finished';
  }

  /** Whether a tool block was opened: a tool call reached the caller. */
  get sawToolUse(): boolean {
    return this.#sawToolUse;
  }

  /** Whether a tool block is open (streaming its input live). */
  get isToolBlockOpen(): boolean {
    return this.#open?.kind === 'tool_use';
  }

  /**
   * `message_start` the first time; `[]` after.
   *
   * @param usage the usage `message_start` announces (the wire decides which counts it names)
   */
  start(usage: Usage): MessageStreamEvent[] {
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
          usage,
        },
      },
    ];
  }

  /** The input-token estimate `message_start` announces (0 without one). */
  get inputTokensEstimate(): number {
    return this.#context.inputTokensEstimate ?? 0;
  }

  /**
   * Refuses upstream data after the end.
   *
   * @param what the data, as the error names it: `a chunk`, `an event`
   * @throws TransportError `MODEL_EPROTO` once the stream is finished.
   */
  checkNotFinished(what: string): void {
    if (this.isFinished) throw protocolError(`${what} arrived after the end of the stream`);
  }

  /** Whether the open block is the one of `key`. */
  isOpen(key: unknown): boolean {
    return this.#open !== undefined && this.#open.key === key;
  }

  /** Text for the block of `key`: into the open text block of that key, else a new one. Empty: nothing. */
  text(text: string, key: unknown, events: MessageStreamEvent[]): void {
    if (text === '') return;
    const offered = this.#context.textToolCalls;
    if (offered === undefined) {
      this.#writeText(text, key, events);
      return;
    }
    if (this.#scan !== undefined && this.#scan.key !== key) this.#flushScan(events);
    this.#scan ??= { scanner: new TextToolCallScanner(offered), key };
    this.#writeText(this.#scan.scanner.push(text), key, events);
  }

  /** Thinking for the block of `key`, as `text` does it. */
  thinking(thinking: string, key: unknown, events: MessageStreamEvent[]): void {
    if (thinking === '') return;
    this.#flushScan(events);
    const index = this.#ensureBlock('thinking', key, events);
    events.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } });
  }

  /** A signature for the thinking block of `key` (opening a blank one when none is open). */
  signature(signature: string, key: unknown, events: MessageStreamEvent[]): void {
    this.#flushScan(events);
    const index = this.#ensureBlock('thinking', key, events);
    events.push({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature } });
  }

  /**
   * Closes the open block, if any — except a text block whose end is held back to be read for calls: it
   * closes when what follows it is known.
   */
  closeBlock(events: MessageStreamEvent[]): void {
    if (this.#open === undefined || (this.#scan !== undefined && this.#open.key === this.#scan.key)) return;
    events.push({ type: 'content_block_stop', index: this.#open.index });
    this.#open = undefined;
  }

  /**
   * Opens a tool block for a call and leaves it open, for its input to stream live (`inputJson`), closing
   * the open block first.
   */
  openToolBlock(
    providerId: string | undefined,
    upstreamName: string,
    key: unknown,
    events: MessageStreamEvent[],
  ): void {
    this.#flushScan(events);
    this.#closeOpenBlock(events);
    this.#sawToolUse = true;
    const index = this.#nextBlockIndex++;
    events.push({
      type: 'content_block_start',
      index,
      content_block: {
        type: 'tool_use',
        id: this.#issueToolId(providerId),
        name: this.#context.toolNames.fromUpstream(upstreamName),
        input: {},
      },
    });
    this.#open = { kind: 'tool_use', index, key };
  }

  /** A piece of the open tool block's input JSON. */
  inputJson(partialJson: string, events: MessageStreamEvent[]): void {
    const index = this.#open!.index;
    events.push({
      type: 'content_block_delta',
      index,
      delta: { type: 'input_json_delta', partial_json: partialJson },
    });
  }

  /**
   * A whole tool call as one block: `content_block_start`, its input JSON in one `input_json_delta`
   * (none when it is blank, which the caller reads as `{}`), `content_block_stop`.
   */
  toolCall(
    providerId: string | undefined,
    upstreamName: string,
    json: string,
    events: MessageStreamEvent[],
  ): void {
    this.openToolBlock(providerId, upstreamName, undefined, events);
    if (/\S/.test(json)) this.inputJson(json, events);
    this.closeBlock(events);
  }

  /**
   * Ends the stream: closes the open block, then `message_delta` and `message_stop`.
   *
   * @param usage the upstream's usage; `undefined` when it sent none (the input estimate stands in)
   */
  finish(stopReason: StopReason, usage: Usage | undefined, events: MessageStreamEvent[]): void {
    const readCalls = this.#endScan(events);
    this.#phase = 'finished';
    this.#closeOpenBlock(events);
    events.push(
      {
        type: 'message_delta',
        delta: {
          stop_reason: readCalls && stopReason === 'end_turn' ? 'tool_use' : stopReason,
          stop_sequence: null,
        },
        usage: this.#deltaUsage(usage),
      },
      { type: 'message_stop' },
    );
  }

  #writeText(text: string, key: unknown, events: MessageStreamEvent[]): void {
    if (text === '') return;
    const index = this.#ensureBlock('text', key, events);
    events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
  }

  /** The held text goes out as text: something other than it follows, so it is no call. */
  #flushScan(events: MessageStreamEvent[]): void {
    const scan = this.#scan;
    if (scan === undefined) return;
    this.#scan = undefined;
    this.#writeText(scan.scanner.flush(), scan.key, events);
  }

  /** The end of the held text: the rest of its text, then its calls as tool blocks; whether any came. */
  #endScan(events: MessageStreamEvent[]): boolean {
    const scan = this.#scan;
    if (scan === undefined) return false;
    this.#scan = undefined;
    const { text, calls } = scan.scanner.end();
    this.#writeText(text, scan.key, events);
    for (const call of calls) {
      this.toolCall(undefined, call.name, JSON.stringify(textCallInput(call, this.#context)), events);
    }
    return calls.length > 0;
  }

  #closeOpenBlock(events: MessageStreamEvent[]): void {
    if (this.#open === undefined) return;
    events.push({ type: 'content_block_stop', index: this.#open.index });
    this.#open = undefined;
  }

  /** The index of the open block of this kind and key, opening one (closing the current one) if needed. */
  #ensureBlock(kind: 'text' | 'thinking', key: unknown, events: MessageStreamEvent[]): number {
    if (this.#open?.kind === kind && this.#open.key === key) return this.#open.index;
    this.#closeOpenBlock(events);
    const index = this.#nextBlockIndex++;
    events.push({
      type: 'content_block_start',
      index,
      content_block:
        kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' },
    });
    this.#open = { kind, index, key };
    return index;
  }

  #deltaUsage(usage: Usage | undefined): MessageDeltaUsage {
    return {
      output_tokens: usage?.output_tokens ?? 0,
      input_tokens: usage?.input_tokens ?? this.inputTokensEstimate,
      cache_creation_input_tokens: usage?.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: usage?.cache_read_input_tokens ?? 0,
    };
  }
}
