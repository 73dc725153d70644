/**
 * The message a streamed answer delivered, folded from its events for the `--log-bodies` log: what the
 * client received, as one JSON body rather than hundreds of frames. Lenient, since it only records: tool
 * input that is not (yet) complete JSON is kept as the text that arrived, and a stream cut short gives
 * what arrived until then.
 *
 * @module
 */
import { isObject } from '../protocol/is-object.js';
import type { MessageStreamEvent } from '../protocol/messages.js';

/** Folds Messages stream events into the message they describe. */
export class StreamTranscript {
  #message: Record<string, unknown> = {};
  readonly #blocks: Record<string, unknown>[] = [];
  readonly #toolInput = new Map<number, string>();
  readonly #errors: unknown[] = [];

  /** Adds one event. */
  add(event: MessageStreamEvent): void {
    const record = event as unknown as Record<string, unknown>;
    const index = typeof record['index'] === 'number' ? record['index'] : -1;
    switch (record['type']) {
      case 'message_start':
        if (isObject(record['message'])) this.#message = { ...record['message'] };
        break;
      case 'content_block_start':
        if (isObject(record['content_block'])) this.#blocks[index] = { ...record['content_block'] };
        break;
      case 'content_block_delta':
        this.#applyDelta(index, record['delta']);
        break;
      case 'content_block_stop':
        this.#finishToolInput(index);
        break;
      case 'message_delta':
        if (isObject(record['delta'])) Object.assign(this.#message, record['delta']);
        if (isObject(record['usage'])) {
          this.#message['usage'] = {
            ...(isObject(this.#message['usage']) ? this.#message['usage'] : {}),
            ...record['usage'],
          };
        }
        break;
      case 'error':
        this.#errors.push(record['error']);
        break;
      default:
        // message_stop, ping and event types added later carry nothing to keep.
        break;
    }
  }

  #applyDelta(index: number, delta: unknown): void {
    const block = this.#blocks[index];
    if (block === undefined || !isObject(delta)) return;
    for (const [field, key] of [
      ['text', 'text'],
      ['thinking', 'thinking'],
    ] as const) {
      if (typeof delta[field] === 'string')
        block[key] = `${typeof block[key] === 'string' ? block[key] : ''}${delta[field]}`;
    }
    if (typeof delta['signature'] === 'string') block['signature'] = delta['signature'];
    if (typeof delta['partial_json'] === 'string') {
      this.#toolInput.set(index, (this.#toolInput.get(index) ?? '') + delta['partial_json']);
    }
  }

  #finishToolInput(index: number): void {
    const text = this.#toolInput.get(index);
    const block = this.#blocks[index];
    if (text === undefined || block === undefined) return;
    this.#toolInput.delete(index);
    try {
      block['input'] = JSON.parse(text) as unknown;
    } catch {
      block['input'] = text;
    }
  }

  /** The message as JSON text, with an `error` event's error when the stream carried one. */
  toJson(): string {
    for (const index of [...this.#toolInput.keys()]) this.#finishToolInput(index);
    const message: Record<string, unknown> = { ...this.#message, content: this.#blocks.filter(Boolean) };
    if (this.#errors.length > 0) message['stream_errors'] = this.#errors;
    return JSON.stringify(message);
  }
}
