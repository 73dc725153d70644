/**
 * Drives a stream translation over an upstream stream, one body chunk at a time: the Chat Completions
 * state machine (`StreamTranslator`, docs/protocol.md D.4) through {@link chatStreamSteps}, or any other wire's
 * translator through its own {@link StreamSteps}. Pure: the input is an async iterable of parsed items,
 * the output the Messages events to send; reading the upstream is the caller's.
 *
 * @module
 */
import type { ChatCompletionChunk } from '../protocol/chat-completions.js';
import type { MessageStreamEvent } from '../protocol/messages.js';
import { StreamTranslator, type StreamContext } from './stream-translator.js';

/** One wire's stream translation, an upstream item at a time, as {@link translateStream} drives it. */
export interface StreamSteps<Item> {
  /** The events before any item (`message_start`); called once, first. */
  start(): MessageStreamEvent[];
  /**
   * The events of one upstream item, or `undefined` for an item that says nothing yet (a preamble): such an
   * item does not release the events of `start`.
   *
   * @throws TransportError for an item that ends the stream with an error
   */
  push(item: Item): readonly MessageStreamEvent[] | undefined;
  /** Whether the upstream stream is complete: no item after it is read. */
  readonly isFinished: boolean;
  /**
   * The input ended before {@link isFinished}: the closing events.
   *
   * @throws TransportError when a stream that ends here is cut short
   */
  end(): readonly MessageStreamEvent[];
}

/** An item of a Chat Completions stream: a parsed chunk, or `'done'` for the `[DONE]` sentinel. */
export type ChatStreamItem = ChatCompletionChunk | 'done';

/**
 * The steps of a Chat Completions stream: `StreamTranslator` over parsed chunks; `'done'` finishes the
 * stream (reading stops there), and an input that ends without it is finished as a stream without `[DONE]`.
 */
export function chatStreamSteps(context: StreamContext): StreamSteps<ChatStreamItem> {
  const translator = new StreamTranslator(context);
  let isFinished = false;
  return {
    start: () => translator.start(),
    push(item) {
      if (item !== 'done') return translator.push(item);
      isFinished = true;
      return translator.finish(true);
    },
    get isFinished() {
      return isFinished;
    },
    end: () => translator.finish(false),
  };
}

/** Appends `events` to `batch`, without the spread that would copy them once more. */
function appendEvents(batch: MessageStreamEvent[], events: readonly MessageStreamEvent[]): void {
  for (let index = 0; index < events.length; index++) batch.push(events[index]!);
}

/**
 * Translates an upstream stream given as batches of parsed items (each batch: what one chunk of the
 * upstream body held) into batches of Messages events, one batch per input batch that produced any.
 *
 * - `message_start` waits for the first item that says something: an upstream whose very first item is
 *   an error then fails before anything reached the caller, so the attempt can still be retried, or
 *   answered by the proxy with a proper HTTP status.
 * - A failure — thrown by `steps`, or by the batch itself while it is read (a batch may be a lazy
 *   iterable that parses as it goes) — is thrown from the iteration after the events the same batch
 *   produced before it, as an unbatched stream would have delivered them.
 * - Reading stops once `steps` is finished; an input that ends before gets the events of `steps.end()`.
 *
 * @example
 * ```ts
 * for await (const batch of translateStream(chunkBatches, chatStreamSteps(context))) send(batch);
 * ```
 */
export async function* translateStream<Item>(
  batches: AsyncIterable<Iterable<Item>>,
  steps: StreamSteps<Item>,
): AsyncGenerator<MessageStreamEvent[], void, undefined> {
  let heldStart: MessageStreamEvent[] | undefined = steps.start();
  const append = (batch: MessageStreamEvent[], events: readonly MessageStreamEvent[]): void => {
    if (heldStart !== undefined) {
      appendEvents(batch, heldStart);
      heldStart = undefined;
    }
    appendEvents(batch, events);
  };
  for await (const items of batches) {
    const batch: MessageStreamEvent[] = [];
    try {
      for (const item of items) {
        const events = steps.push(item);
        if (events !== undefined) append(batch, events);
        if (steps.isFinished) break;
      }
    } catch (error) {
      if (batch.length > 0) yield batch;
      throw error;
    }
    if (batch.length > 0) yield batch;
    if (steps.isFinished) return;
  }
  const last: MessageStreamEvent[] = [];
  append(last, steps.end());
  if (last.length > 0) yield last;
}
