import { readFileSync } from 'node:fs';
import { createParser } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import { isTransportError } from '../../src/errors.js';
import { accumulateStream } from './accumulate-stream.js';
import { sdkFinalMessage } from './stream-laws.js';
import type { MessageStreamEvent } from '../../src/protocol/messages.js';

const FIXTURES = new URL('../../src/protocol/__fixtures__/reference-anthropic/', import.meta.url);

function recorded(path: string): MessageStreamEvent[] {
  const text = readFileSync(new URL(path, FIXTURES), 'utf8');
  const events: MessageStreamEvent[] = [];
  if (path.endsWith('.sse')) {
    createParser({ onEvent: (event) => events.push(JSON.parse(event.data) as MessageStreamEvent) }).feed(
      text,
    );
  } else {
    for (const line of text.split('\n'))
      if (line.trim() !== '') events.push(JSON.parse(line) as MessageStreamEvent);
  }
  return events;
}

const start = (
  usage: Record<string, unknown> = { input_tokens: 5, output_tokens: 1 },
): MessageStreamEvent => ({
  type: 'message_start',
  message: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-x',
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: usage as { input_tokens: number; output_tokens: number },
  },
});

function thrownMessage(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    expect(isTransportError(error) && error.code === 'MODEL_EPROTO').toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected an error');
}

describe('accumulateStream', () => {
  it('folds text, thinking with signature, and tool input into a message', () => {
    const message = accumulateStream([
      start(),
      { type: 'ping' },
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me ' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'see.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hi' } },
      {
        type: 'content_block_delta',
        index: 1,
        delta: { type: 'citations_delta', citation: { cited_text: 'c' } },
      },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: '!' } },
      { type: 'content_block_stop', index: 1 },
      {
        type: 'content_block_start',
        index: 2,
        content_block: { type: 'tool_use', id: 't1', name: 'f', input: {} },
      },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"a":' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '[1,2]}' } },
      { type: 'content_block_stop', index: 2 },
      {
        type: 'content_block_start',
        index: 3,
        content_block: { type: 'tool_use', id: 't2', name: 'g', input: {} },
      },
      { type: 'content_block_stop', index: 3 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: {
          output_tokens: 42,
          input_tokens: 7,
          cache_read_input_tokens: 3,
          cache_creation_input_tokens: null,
        },
      },
      { type: 'message_stop' },
    ]);
    expect(message).toEqual({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [
        { type: 'thinking', thinking: 'Let me see.', signature: 'sig' },
        { type: 'text', text: 'Hi!', citations: [{ cited_text: 'c' }] },
        { type: 'tool_use', id: 't1', name: 'f', input: { a: [1, 2] } },
        { type: 'tool_use', id: 't2', name: 'g', input: {} },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 7, output_tokens: 42, cache_read_input_tokens: 3 },
    });
  });

  it('keeps message_start usage that message_delta does not repeat, and never adds counters', () => {
    const message = accumulateStream([
      start({ input_tokens: 10, output_tokens: 1, cache_read_input_tokens: 4 }),
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: 5 },
      },
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: 9 },
      },
      { type: 'message_stop' },
    ]);
    expect(message.usage).toEqual({ input_tokens: 10, output_tokens: 9, cache_read_input_tokens: 4 });
  });

  it('does not share the message_start objects with the result', () => {
    const first = start();
    const message = accumulateStream([
      first,
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: 2 },
      },
      { type: 'message_stop' },
    ]);
    expect(message.content).toHaveLength(1);
    expect(first.type === 'message_start' && first.message.content).toEqual([]);
    expect(first.type === 'message_start' && first.message.usage.output_tokens).toBe(1);
  });

  it.each([
    'anthropic-sdk-ts/basic-text.sse',
    'anthropic-sdk-ts/tool-use.sse',
    'vercel/sonnet-4.5.text.chunks.jsonl',
    'vercel/sonnet-4.5.tool-no-args.chunks.jsonl',
    'vercel/haiku-4.5.json-tool.chunks.jsonl',
    'vercel/sonnet-4.5.thinking.chunks.jsonl',
  ])('agrees with the official SDK accumulator on the recorded stream %s', async (path) => {
    const events = recorded(path);
    const ours = accumulateStream(events);
    const sdk = await sdkFinalMessage(events);
    expect({ content: ours.content, stop_reason: ours.stop_reason, usage: ours.usage }).toEqual({
      content: sdk['content'],
      stop_reason: sdk['stop_reason'],
      usage: sdk['usage'],
    });
  });

  it('accumulates the recorded tool-use stream into its text and tool input', () => {
    const message = accumulateStream(recorded('anthropic-sdk-ts/tool-use.sse'));
    expect(message.content).toEqual([
      { type: 'text', text: "I'll check the current weather in Paris for you." },
      {
        type: 'tool_use',
        id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn',
        name: 'get_weather',
        input: { location: 'Paris' },
      },
    ]);
    expect(message.stop_reason).toBe('tool_use');
  });

  it('refuses the recorded max_tokens stream whose tool block never stops, rather than guessing its input', () => {
    expect(
      thrownMessage(() => accumulateStream(recorded('anthropic-sdk-ts/incomplete-partial-json.sse'))),
    ).toMatch(/the tool input of block 1 was never completed \(no content_block_stop\)/);
  });

  it('refuses tool input cut off mid-JSON, which only a partial-JSON parser could read', () => {
    const events = recorded('anthropic-sdk-ts/incomplete-partial-json.sse');
    const stop: MessageStreamEvent = { type: 'content_block_stop', index: 1 };
    const withStop = [...events.slice(0, -2), stop, ...events.slice(-2)];
    expect(thrownMessage(() => accumulateStream(withStop))).toMatch(
      /the tool input of block 1 is not valid JSON/,
    );
  });

  it.each<[string, MessageStreamEvent[], RegExp]>([
    ['no message_start', [{ type: 'message_stop' }], /message_stop arrived before message_start/],
    ['an empty stream', [], /the stream had no message_start/],
    ['no message_stop', [start()], /the stream ended without message_stop/],
    ['a second message_start', [start(), start()], /a second message_start arrived/],
    [
      'a delta for a block that never started',
      [start(), { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x' } }],
      /a delta arrived for block 0, which never started/,
    ],
    [
      'a block index that skips',
      [start(), { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }],
      /block 1 started, expected block 0/,
    ],
    [
      'tool input that is not an object',
      [
        start(),
        {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'tool_use', id: 't', name: 'f', input: {} },
        },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '[1]' } },
        { type: 'content_block_stop', index: 0 },
      ],
      /the tool input of block 0 is not a JSON object/,
    ],
    [
      'an error event',
      [
        start(),
        {
          type: 'error',
          error: { type: 'overloaded_error', message: 'Overloaded' },
        } as unknown as MessageStreamEvent,
      ],
      /the stream carried an error event: overloaded_error: Overloaded/,
    ],
  ])('refuses %s with MODEL_EPROTO', (_name, events, pattern) => {
    expect(thrownMessage(() => accumulateStream(events))).toMatch(pattern);
  });
});
