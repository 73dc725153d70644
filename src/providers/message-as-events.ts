/**
 * A whole Messages `message` as the stream events that build it: for servers that answer a stream request
 * with JSON, so the caller still gets a stream.
 *
 * @module
 */
import type { Message, MessageStreamEvent } from '../protocol/messages.js';

/** A whole message as the stream events that build it (for servers that ignore `stream: true`). */
export function* messageAsEvents(message: Message): Generator<MessageStreamEvent> {
  const { content, usage, stop_reason, stop_sequence, ...rest } = message;
  yield {
    type: 'message_start',
    message: {
      ...rest,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 0 },
    },
  };
  for (let index = 0; index < content.length; index++) {
    const block = content[index]!;
    switch (block.type) {
      case 'text':
        yield { type: 'content_block_start', index, content_block: { type: 'text', text: '' } };
        yield {
          type: 'content_block_delta',
          index,
          delta: { type: 'text_delta', text: (block as { text: string }).text },
        };
        break;
      case 'thinking':
        yield {
          type: 'content_block_start',
          index,
          content_block: { type: 'thinking', thinking: '', signature: '' },
        };
        yield {
          type: 'content_block_delta',
          index,
          delta: { type: 'thinking_delta', thinking: (block as { thinking: string }).thinking },
        };
        break;
      case 'tool_use': {
        const toolUse = block as { id: string; name: string; input: Record<string, unknown> };
        yield {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: toolUse.id, name: toolUse.name, input: {} },
        };
        const json = JSON.stringify(toolUse.input);
        if (json !== '{}')
          yield {
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json: json },
          };
        break;
      }
      default:
        yield { type: 'content_block_start', index, content_block: block };
    }
    yield { type: 'content_block_stop', index };
  }
  yield { type: 'message_delta', delta: { stop_reason, stop_sequence }, usage };
  yield { type: 'message_stop' };
}
