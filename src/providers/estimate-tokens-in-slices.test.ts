import { describe, expect, it } from 'vitest';
import { estimateInputTokens } from '../translate/estimate-input-tokens.js';
import {
  FLOOR_TOKENS_PER_CHAR,
  MAX_RUN_CHARS,
  SLICE_CHARS,
  estimateInputTokensInSlices,
} from './estimate-tokens-in-slices.js';

/** One token per word: a stand-in tokenizer whose counts are easy to follow. */
const countWords = (text: string) => text.split(/\s+/).filter((word) => word !== '').length;

function request(...texts: string[]) {
  return { model: 'm', messages: texts.map((content) => ({ role: 'user', content })) };
}

describe('estimateInputTokensInSlices', () => {
  it('gives the plain estimate for ordinary short texts', async () => {
    const input = request('hello there, how are you', 'fine thanks');
    expect(await estimateInputTokensInSlices(input, countWords)).toBe(estimateInputTokens(input, countWords));
  });

  it('breaks a long run with no space into runs the tokenizer counts one by one', async () => {
    const seen: string[] = [];
    const count = (text: string) => {
      seen.push(text);
      return countWords(text);
    };
    const run = 'a'.repeat(SLICE_CHARS * 3);
    const estimate = await estimateInputTokensInSlices(request(run), count);
    expect(seen).toHaveLength(3);
    for (const slice of seen) {
      expect(Math.max(...slice.split(' ').map((part) => part.length))).toBeLessThanOrEqual(MAX_RUN_CHARS);
    }
    // One "word" per run of MAX_RUN_CHARS characters: the estimate grew, it did not shrink.
    expect(estimate).toBeGreaterThanOrEqual(estimateInputTokens(request(run), countWords));
  });

  it('gives the loop back while counting and estimates linearly past its time budget', async () => {
    let clock = 0;
    let yields = 0;
    let calls = 0;
    // Every call of the tokenizer "takes" 10 ms.
    const slowCount = (text: string) => {
      calls++;
      clock += 10;
      return countWords(text);
    };
    const text = 'abc '.repeat((SLICE_CHARS / 4) * 5); // five slices of whole words
    const estimate = await estimateInputTokensInSlices(request(text), slowCount, {
      now: () => clock,
      yieldToLoop: async () => {
        yields++;
      },
      exactBudgetMs: 20,
    });
    expect(calls).toBe(2);
    expect(yields).toBe(2);
    // Two slices counted (0.25 tokens per character), three estimated at the higher floor rate.
    const counted = 2 * (SLICE_CHARS / 4);
    const linear = 3 * Math.ceil(SLICE_CHARS * FLOOR_TOKENS_PER_CHAR);
    expect(estimate).toBe(Math.ceil((counted + linear) * 1.25) + 8);
  });
});
