/**
 * Drives the stream translation state machine (`StreamTranslator`) over an async iterable of parsed Chat
 * Completions chunks (PROTOCOLS.md D.4).
 *
 * @module
 */
import type { ChatCompletionChunk } from '../protocol/chat-completions.js';
import type { MessageStreamEvent } from '../protocol/messages.js';
import { StreamTranslator, type StreamContext } from './stream-translator.js';

/**
 * Translates a stream of parsed chunks into Messages events: `message_start` first (before the first
 * chunk arrives), then the events of each chunk, then the closing events. The input is the upstream's
 * SSE `data:` payloads, parsed, with the `[DONE]` sentinel as the string `'done'`; reading stops there.
 *
 * Errors are thrown from the iteration (see `StreamTranslator`), after the events translated so far; a
 * caller that already sent those turns the error into an SSE `error` event (its `body`).
 */
export async function* translateStream(
  chunks: AsyncIterable<ChatCompletionChunk | 'done'>,
  context: StreamContext,
): AsyncGenerator<MessageStreamEvent, void, undefined> {
  const translator = new StreamTranslator(context);
  yield* translator.start();
  let sawDone = false;
  for await (const chunk of chunks) {
    if (chunk === 'done') {
      sawDone = true;
      break;
    }
    yield* translator.push(chunk);
  }
  yield* translator.finish(sawDone);
}
