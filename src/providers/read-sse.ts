/**
 * Server-sent events from a response body: bytes → UTF-8 text (multi-byte characters split across
 * chunks handled by a streaming decoder) → `eventsource-parser` → `{ event, data }` records.
 *
 * @module
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { TransportError } from '../errors.js';
import { bodyChunks, classifyError, type AttemptContext, type HttpResponse } from './http-exchange.js';

/** One SSE message. `event` is undefined for data-only messages. */
export interface SseMessage {
  event: string | undefined;
  data: string;
}

/**
 * Yields the SSE messages of a response body as they arrive. Enforces the response size limit over the
 * whole stream, and the largest single event. Breaking out of the loop destroys the body.
 */
export async function* readSse(response: HttpResponse, context: AttemptContext): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder('utf-8');
  const pending: SseMessage[] = [];
  let parseFailure: TransportError | undefined;
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      pending.push({ event: message.event, data: message.data });
    },
    onError(error) {
      if (error.type === 'max-buffer-size-exceeded') {
        parseFailure = new TransportError(
          'MODEL_ETOOBIG',
          `an event in the ${context.provider} stream is larger than the limit of ${context.maxResponseBytes} bytes`,
          { provider: context.provider },
        );
      }
    },
    maxBufferSize: context.maxResponseBytes,
  });
  let size = 0;
  try {
    for await (const buffer of bodyChunks(response, context)) {
      size += buffer.length;
      if (size > context.maxResponseBytes) {
        throw new TransportError(
          'MODEL_ETOOBIG',
          `the ${context.provider} stream is larger than the limit of ${context.maxResponseBytes} bytes (maxResponseBytes)`,
          { provider: context.provider },
        );
      }
      parser.feed(decoder.decode(buffer, { stream: true }));
      if (parseFailure !== undefined) throw parseFailure;
      while (pending.length > 0) yield pending.shift()!;
    }
    // A stream whose last event lacks its terminating blank line (or even the end of its last line) still
    // delivers that event: the parser dispatches only at a blank line, and `reset({ consume: true })`
    // parses a pending line without dispatching it, so the blank line is supplied here. A stream that
    // ended properly gains only empty lines, which dispatch nothing.
    parser.feed(`${decoder.decode()}\n\n`);
    while (pending.length > 0) yield pending.shift()!;
  } catch (error) {
    throw classifyError(error, context);
  } finally {
    if (!response.body.destroyed) response.body.destroy();
  }
}
