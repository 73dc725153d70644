/**
 * Stream translation at scale: a very long tool-call stream. Kept apart from the example tests because
 * it does a hundred thousand steps, which a mutation run (instrumented code, a loaded machine) cannot
 * afford for every mutant: a run names its test sets in `TPX_MUTATION_TESTS` (vitest.mutation.config.ts).
 */
import { describe, expect, it } from 'vitest';
import type { ChatCompletionChunk } from '../protocol/chat-completions.js';
import { StreamTranslator } from './stream-translator.js';

function toolCallChunk(value: Record<string, unknown>): ChatCompletionChunk {
  return { id: 'chatcmpl-1', choices: [{ index: 0, delta: { tool_calls: [value] }, finish_reason: null }] };
}

describe('StreamTranslator at scale', () => {
  it('translates a stream of 100 000 argument fragments in linear time, without re-sending any', () => {
    const fragments = ['{"data":"', ...Array.from({ length: 100_000 }, () => 'abcde'), '"}'];
    let counter = 0;
    const translator = new StreamTranslator({
      requestModel: 'claude-sonnet-4-5',
      toolNames: { fromUpstream: (name) => name },
      generateId: () => `gen${++counter}`,
    });
    const events = [...translator.start()];
    events.push(
      ...translator.push(toolCallChunk({ index: 0, id: 'c', function: { name: 'f', arguments: '' } })),
    );
    for (const fragment of fragments)
      events.push(...translator.push(toolCallChunk({ index: 0, function: { arguments: fragment } })));
    events.push(...translator.finish(true));
    const sent = events.flatMap((event) =>
      event.type === 'content_block_delta' && event.delta.type === 'input_json_delta'
        ? [event.delta.partial_json]
        : [],
    );
    expect(sent).toHaveLength(fragments.length);
    expect(sent.join('').length).toBe(fragments.join('').length);
  });
});

describe('StreamTranslator at scale, reading tool calls written as text', () => {
  function textChunk(content: string): ChatCompletionChunk {
    return { id: 'chatcmpl-1', choices: [{ index: 0, delta: { content }, finish_reason: null }] };
  }

  it.each([
    ['a Hermes call', '<tool_call>{"name": "write", "arguments": {"data": "', '"}}</tool_call>'],
    ['a bare JSON call', '{"name": "write", "arguments": {"data": "', '"}}'],
  ])('reads %s streamed in 100 000 pieces once, not once per piece', (_name, head, tail) => {
    const pieces = [head, ...Array.from({ length: 100_000 }, () => 'ab{c'), tail];
    let counter = 0;
    const translator = new StreamTranslator({
      requestModel: 'claude-sonnet-4-5',
      toolNames: { fromUpstream: (name) => name },
      generateId: () => `gen${++counter}`,
      textToolCalls: new Set(['write']),
    });
    const events = [...translator.start()];
    for (const piece of pieces) events.push(...translator.push(textChunk(piece)));
    events.push(
      ...translator.push({ id: 'chatcmpl-1', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
    );
    events.push(...translator.finish(true));
    const input = events.flatMap((event) =>
      event.type === 'content_block_delta' && event.delta.type === 'input_json_delta'
        ? [event.delta.partial_json]
        : [],
    );
    expect(
      events.some((event) => event.type === 'content_block_delta' && event.delta.type === 'text_delta'),
    ).toBe(false);
    expect(JSON.parse(input.join(''))).toEqual({ data: 'ab{c'.repeat(100_000) });
  });
});

describe('StreamTranslator at scale, with plain text and text-written calls read', () => {
  it('lets 100 000 pieces of plain text out as they come, each once', () => {
    const translator = new StreamTranslator({
      requestModel: 'claude-sonnet-4-5',
      toolNames: { fromUpstream: (name) => name },
      generateId: () => 'gen',
      textToolCalls: new Set(['write']),
    });
    const events = [...translator.start()];
    for (let index = 0; index < 100_000; index++) {
      events.push(
        ...translator.push({
          id: 'chatcmpl-1',
          choices: [{ index: 0, delta: { content: `w${index % 10}, ` }, finish_reason: null }],
        }),
      );
    }
    events.push(...translator.finish(true));
    const text = events.flatMap((event) =>
      event.type === 'content_block_delta' && event.delta.type === 'text_delta' ? [event.delta.text] : [],
    );
    // Only the trailing space of each piece waits for the next one.
    expect(text.length).toBeGreaterThanOrEqual(100_000);
    expect(text.join('')).toBe(Array.from({ length: 100_000 }, (_, index) => `w${index % 10}, `).join(''));
  });
});
