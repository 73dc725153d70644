import { describe, expect, it } from 'vitest';

import type { Completion } from './completion.js';
import { renderCompletionChunks } from './render-completion.js';

const ENVELOPE = { id: 'chatcmpl-1', created: 1, model: 'm', promptCharacters: 40 };

describe('renderCompletionChunks', () => {
  it('sends the role first, then reasoning, text and a tool call, and finishes', () => {
    const completion: Completion = {
      reasoning: 'Hmm.',
      text: 'Calling.',
      toolCalls: [{ id: 'call_1', name: 'f', arguments: '{"a":1}' }],
      finishReason: 'tool_calls',
    };
    const { contentChunks, closingChunks } = renderCompletionChunks(completion, ENVELOPE, false);
    const deltas = contentChunks.map((chunk) => (chunk['choices'] as [{ delta: unknown }])[0].delta);
    expect(deltas).toEqual([
      { role: 'assistant', content: '' },
      { reasoning_content: 'Hmm.' },
      { content: 'Calling.' },
      { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] },
    ]);
    expect(closingChunks).toEqual([
      {
        id: 'chatcmpl-1',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }],
      },
    ]);
  });

  it('sends no finish chunk for an answer that never finishes', () => {
    const completion: Completion = { reasoning: null, text: 'Partial', toolCalls: [], finishReason: null };
    expect(renderCompletionChunks(completion, ENVELOPE, false).closingChunks).toEqual([]);
  });
});
