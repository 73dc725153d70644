/**
 * Server-sent events from a response body: bytes → UTF-8 text (multi-byte characters split across
 * chunks handled by a streaming decoder) → `eventsource-parser` → `{ event, data }` records.
 *
 * @module
 */
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { classifyError } from './classify-error.js';
import type { AttemptContext, HttpResponse } from './http-exchange.js';
import { IdleDeadline } from './idle-deadline.js';
import { responseTooLarge } from './response-too-large.js';

/** One SSE message. `event` is undefined for data-only messages. */
export interface SseMessage {
  event: string | undefined;
  data: string;
}

/**
 * Yields the SSE messages of a response body as they arrive, in batches: every message completed by
 * one chunk of the body comes in one array (never empty), so a consumer handles a chunk's worth of
 * events in one step. Enforces the response size limit over the whole stream (which bounds any single
 * event too: the parser never holds more than it was fed) and the idle deadline between chunks. Breaking
 * out of the loop destroys the body.
 */
export async function* readSse(
  response: HttpResponse,
  context: AttemptContext,
): AsyncGenerator<SseMessage[]> {
  // StringDecoder rather than TextDecoder: the same streaming UTF-8 decoding (a character split across
  // chunks waits for its rest; invalid bytes become U+FFFD), without an ICU converter made per stream.
  const decoder = new StringDecoder('utf8');
  let atStart = true;
  let pending: SseMessage[] = [];
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      pending.push({ event: message.event, data: message.data });
    },
  });
  const { body } = response;
  const idle = new IdleDeadline(response, context);
  let size = 0;
  try {
    for (;;) {
      idle.waiting();
      const buffer = await body.read();
      idle.busy();
      if (buffer === null) break;
      size += buffer.length;
      if (size > context.maxResponseBytes) {
        throw responseTooLarge(
          context.provider,
          `the ${context.provider} stream is larger than the limit of ${context.maxResponseBytes} bytes (maxResponseBytes)`,
        );
      }
      let text = decoder.write(buffer);
      if (atStart && text !== '') {
        atStart = false;
        // A byte order mark opening the stream is not part of it (WHATWG HTML, "Parsing an event stream").
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      }
      parser.feed(text);
      if (pending.length > 0) {
        const batch = pending;
        pending = [];
        yield batch;
      }
    }
    // A stream whose last event lacks its terminating blank line (or even the end of its last line) still
    // delivers that event: the parser dispatches only at a blank line, and `reset({ consume: true })`
    // parses a pending line without dispatching it, so the blank line is supplied here. A stream that
    // ended properly gains only empty lines, which dispatch nothing.
    parser.feed(`${decoder.end()}\n\n`);
    if (pending.length > 0) yield pending;
  } catch (error) {
    throw classifyError(error, context);
  } finally {
    idle.stop();
    // A consumer that stops early leaves no body half read: a body still arriving is aborted.
    body.destroy();
  }
}
