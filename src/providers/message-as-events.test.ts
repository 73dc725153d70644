import { describe, expect, it } from 'vitest';
import type { Message } from '../protocol/messages.js';
import { messageAsEvents } from './message-as-events.js';

describe('messageAsEvents', () => {
  it('streams every kind of block of a whole message, in order, with usage at the start and the end', () => {
    const message = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [
        { type: 'thinking', thinking: 'hmm', signature: 'sig' },
        { type: 'text', text: 'Hello' },
        { type: 'tool_use', id: 'toolu_1', name: 'get', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'toolu_2', name: 'now', input: {} },
        { type: 'redacted_thinking', data: 'opaque' },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 34 },
    } as unknown as Message;
    expect([...messageAsEvents(message)]).toStrictEqual([
      {
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'm',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 12, output_tokens: 0 },
        },
      },
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hello' } },
      { type: 'content_block_stop', index: 1 },
      {
        type: 'content_block_start',
        index: 2,
        content_block: { type: 'tool_use', id: 'toolu_1', name: 'get', input: {} },
      },
      {
        type: 'content_block_delta',
        index: 2,
        delta: { type: 'input_json_delta', partial_json: '{"city":"Paris"}' },
      },
      { type: 'content_block_stop', index: 2 },
      {
        type: 'content_block_start',
        index: 3,
        content_block: { type: 'tool_use', id: 'toolu_2', name: 'now', input: {} },
      },
      { type: 'content_block_stop', index: 3 },
      { type: 'content_block_start', index: 4, content_block: { type: 'redacted_thinking', data: 'opaque' } },
      { type: 'content_block_stop', index: 4 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { input_tokens: 12, output_tokens: 34 },
      },
      { type: 'message_stop' },
    ]);
  });

  it('streams a message without content as start, delta and stop only', () => {
    const message = {
      id: 'msg_2',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [],
      stop_reason: 'stop_sequence',
      stop_sequence: 'END',
      usage: { input_tokens: 1, output_tokens: 0 },
    } as unknown as Message;
    expect([...messageAsEvents(message)].map((event) => event.type)).toStrictEqual([
      'message_start',
      'message_delta',
      'message_stop',
    ]);
    expect([...messageAsEvents(message)][1]).toStrictEqual({
      type: 'message_delta',
      delta: { stop_reason: 'stop_sequence', stop_sequence: 'END' },
      usage: { input_tokens: 1, output_tokens: 0 },
    });
  });
});
