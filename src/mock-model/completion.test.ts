import { describe, expect, it } from 'vitest';

import { completionUsage, splitFragments, splitWords } from './completion.js';

describe('splitting', () => {
  it.each(['Hello  big world\n', '   ', '', 'one', '\n\nlines\nand  more ', 'emoji 🙂 here'])(
    'splits %j into word pieces that join back to it',
    (text) => {
      const pieces = splitWords(text);
      expect(pieces.join('')).toBe(text);
      expect(pieces.every((piece) => piece !== '')).toBe(true);
    },
  );

  it('puts leading whitespace on the word that follows it', () => {
    expect(splitWords('Hello  big world\n')).toEqual(['Hello', '  big', ' world', '\n']);
  });

  it('never splits a surrogate pair between argument fragments', () => {
    const text = '{"q":"🙂🙂🙂🙂🙂"}';
    const fragments = splitFragments(text, 3);
    expect(fragments.join('')).toBe(text);
    expect(fragments.every((fragment) => !/[\uD800-\uDBFF]$/.test(fragment))).toBe(true);
  });
});

describe('completionUsage', () => {
  it('counts a token per four characters, reasoning inside the output', () => {
    const usage = completionUsage(
      {
        reasoning: 'Think.',
        text: 'Answer.',
        toolCalls: [{ id: 'call_1', name: 'f', arguments: '{"a":1}' }],
        finishReason: 'stop',
      },
      40,
    );
    expect(usage).toEqual({ inputTokens: 10, outputTokens: 4 + 2, reasoningTokens: 2 });
  });
});
