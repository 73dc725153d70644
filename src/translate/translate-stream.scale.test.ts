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
