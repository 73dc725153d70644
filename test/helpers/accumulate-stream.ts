/**
 * Folds a Messages event stream into the `message` it describes, as a client's accumulator does (the
 * official SDK's `MessageStream`), but strictly: tool input is parsed once, at `content_block_stop`, and
 * must be complete JSON.
 *
 * @module
 */
import { isObject } from '../../src/protocol/is-object.js';
import { TransportError } from '../../src/errors.js';
import type { Message, MessageStreamEvent } from '../../src/protocol/messages.js';
import { parseExactJson } from '../../src/protocol/exact-json.js';

/**
 * The `message` a stream of events describes.
 *
 * - `message_start` gives the envelope (id, model, usage so far).
 * - `text_delta` / `thinking_delta` append; `signature_delta` sets the signature; `citations_delta` adds
 *   a citation; `input_json_delta` fragments are collected and `JSON.parse`d once at
 *   `content_block_stop` (a block without fragments, or with only whitespace, keeps `input: {}`).
 * - `message_delta` sets `stop_reason` and `stop_sequence` (and any other delta field it carries), and
 *   merges its usage over what `message_start` said: `output_tokens` always, the other counters when
 *   present and not null — they are cumulative totals, never added (A.6).
 * - `ping` and unknown event types are skipped.
 *
 * @throws TransportError `MODEL_EPROTO` when the events do not form one complete message: no
 *   `message_start`, no `message_stop`, an `error` event, a delta for a block that does not exist, a tool
 *   block whose input never reached its `content_block_stop`, or tool input that is not a JSON object.
 */
export function accumulateStream(events: Iterable<MessageStreamEvent>): Message {
  let message: Message | undefined;
  const fragments = new Map<number, string[]>();

  for (const event of events) {
    const type = (event as { type: unknown }).type;
    if (type === 'error') {
      const error = (event as { error?: { type?: unknown; message?: unknown } }).error;
      throw incomplete(
        `the stream carried an error event: ${String(error?.type)}: ${String(error?.message)}`,
      );
    }
    if (event.type === 'message_start') {
      if (message !== undefined) throw incomplete('a second message_start arrived');
      const start = event.message;
      message = { ...start, content: [...start.content], usage: { ...start.usage } };
      continue;
    }
    if (event.type === 'ping') continue;
    if (message === undefined) {
      if (isKnown(event.type)) throw incomplete(`${event.type} arrived before message_start`);
      continue;
    }
    switch (event.type) {
      case 'content_block_start': {
        if (event.index !== message.content.length) {
          throw incomplete(`block ${event.index} started, expected block ${message.content.length}`);
        }
        message.content.push({ ...event.content_block });
        break;
      }
      case 'content_block_delta': {
        const block = message.content[event.index];
        if (block === undefined)
          throw incomplete(`a delta arrived for block ${event.index}, which never started`);
        const delta = event.delta;
        switch (delta.type) {
          case 'text_delta':
            (block as { text: string }).text = ((block as { text?: string }).text ?? '') + delta.text;
            break;
          case 'thinking_delta':
            (block as { thinking: string }).thinking =
              ((block as { thinking?: string }).thinking ?? '') + delta.thinking;
            break;
          case 'signature_delta':
            (block as { signature: string }).signature = delta.signature;
            break;
          case 'citations_delta': {
            const citations = (block as { citations?: unknown[] | null }).citations;
            (block as { citations: unknown[] }).citations = [...(citations ?? []), delta.citation];
            break;
          }
          case 'input_json_delta': {
            const list = fragments.get(event.index);
            if (list === undefined) fragments.set(event.index, [delta.partial_json]);
            else list.push(delta.partial_json);
            break;
          }
          default:
            // A delta type added to the protocol later: nothing this accumulator can apply.
            break;
        }
        break;
      }
      case 'content_block_stop': {
        const block = message.content[event.index];
        if (block === undefined) throw incomplete(`block ${event.index} stopped, but it never started`);
        const list = fragments.get(event.index);
        if (list !== undefined) {
          const text = list.join('');
          fragments.delete(event.index);
          if (/\S/.test(text)) (block as { input: unknown }).input = parseInput(text, event.index);
        }
        break;
      }
      case 'message_delta': {
        const { stop_reason, stop_sequence, ...rest } = event.delta;
        message.stop_reason = stop_reason;
        message.stop_sequence = stop_sequence ?? null;
        for (const [key, value] of Object.entries(rest)) {
          if (value !== undefined) message[key] = value;
        }
        const usage = message.usage;
        for (const [key, value] of Object.entries(event.usage)) {
          if (key === 'output_tokens' || (value !== undefined && value !== null)) usage[key] = value;
        }
        break;
      }
      case 'message_stop': {
        const unstopped = [...fragments.keys()];
        if (unstopped.length > 0) {
          throw incomplete(
            `the tool input of block ${unstopped[0]} was never completed (no content_block_stop)`,
          );
        }
        return message;
      }
      default:
        break;
    }
  }
  throw incomplete(
    message === undefined ? 'the stream had no message_start' : 'the stream ended without message_stop',
  );
}

function parseInput(text: string, index: number): Record<string, unknown> {
  let value: unknown;
  try {
    // As a non-streamed answer reads it: numbers a double cannot hold stay exact.
    value = parseExactJson(text);
  } catch (error) {
    throw incomplete(
      `the tool input of block ${index} is not valid JSON: ${JSON.stringify(text.slice(0, 100))}`,
      error,
    );
  }
  if (!isObject(value)) {
    throw incomplete(
      `the tool input of block ${index} is not a JSON object: ${JSON.stringify(text.slice(0, 100))}`,
    );
  }
  return value;
}

function isKnown(type: string): boolean {
  return (
    type === 'content_block_start' ||
    type === 'content_block_delta' ||
    type === 'content_block_stop' ||
    type === 'message_delta' ||
    type === 'message_stop'
  );
}

function incomplete(message: string, cause?: unknown): TransportError {
  return new TransportError(
    'MODEL_EPROTO',
    `incomplete message stream: ${message}`,
    cause === undefined ? {} : { cause },
  );
}
