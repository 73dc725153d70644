/**
 * Streams in batches, for the proxy: the events one upstream chunk produced, in one array. The public
 * `ModelTransport.stream` hands out one event at a time, which costs a promise and a microtask turn per
 * event in every layer it passes; the proxy writes a chunk's worth of frames at once instead. A
 * transport made by `createTransport` offers its batches under {@link STREAM_BATCHES}; any other
 * `ModelTransport` (a test double, a wrapper) is read through its `stream`, one event per batch.
 *
 * @module
 */
import type { MessageStreamEvent } from '../protocol/messages.js';
import type { ExchangeOptions, MessagesRequestInput, ModelTransport } from './types.js';

/** The key of a transport's batch stream. Not part of the public API. */
export const STREAM_BATCHES: unique symbol = Symbol('tpx-transport.streamBatches');

/** What a transport offering batches has under {@link STREAM_BATCHES}. */
export type StreamBatches = (
  request: MessagesRequestInput,
  options?: ExchangeOptions,
) => AsyncIterable<MessageStreamEvent[]>;

async function* oneEventPerBatch(
  events: AsyncIterable<MessageStreamEvent>,
): AsyncGenerator<MessageStreamEvent[]> {
  for await (const event of events) yield [event];
}

/**
 * The exchange's events as non-empty batches, in protocol order, with the same failures, cancellation
 * and early-exit behaviour as `transport.stream`.
 */
export function streamBatches(
  transport: ModelTransport,
  request: MessagesRequestInput,
  options?: ExchangeOptions,
): AsyncIterable<MessageStreamEvent[]> {
  const batches = (transport as { [STREAM_BATCHES]?: StreamBatches })[STREAM_BATCHES];
  if (typeof batches === 'function') return batches(request, options);
  return oneEventPerBatch(transport.stream(request, options));
}
