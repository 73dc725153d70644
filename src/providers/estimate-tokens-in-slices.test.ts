import { describe, expect, it } from 'vitest';
import { estimateInputTokens } from '../translate/estimate-input-tokens.js';
import {
  FLOOR_TOKENS_PER_CHAR,
  MAX_RUN_CHARS,
  SLICE_CHARS,
  YIELD_AFTER_MS,
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
    // Only spaces were added: every character of the run reaches the tokenizer.
    expect(seen.join('').replaceAll(' ', '')).toBe(run);
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

  it('counts a text that appears twice once, and asks nothing for an empty tail', async () => {
    const seen: string[] = [];
    const count = (text: string) => {
      seen.push(text);
      return countWords(text);
    };
    const text = 'word '.repeat(SLICE_CHARS / 5);
    const estimate = await estimateInputTokensInSlices(request(text, text), count);
    expect(seen).toStrictEqual([text]);
    expect(estimate).toBe(estimateInputTokens(request(text, text), countWords));
  });

  it('gives the loop back each time the counting since the last yield reaches the limit', async () => {
    let clock = 0;
    const yieldsAtCall: number[] = [];
    let calls = 0;
    const halfLimitEach = (text: string) => {
      calls++;
      clock += YIELD_AFTER_MS / 2;
      return countWords(text);
    };
    await estimateInputTokensInSlices(request('abc '.repeat((SLICE_CHARS / 4) * 5)), halfLimitEach, {
      now: () => clock,
      yieldToLoop: async () => {
        yieldsAtCall.push(calls);
      },
    });
    expect(calls).toBe(5);
    expect(yieldsAtCall).toStrictEqual([2, 4]);
  });

  it('estimates everything at the floor rate when the budget allows no counting', async () => {
    const count = (): number => {
      throw new Error('the tokenizer was asked although the budget was spent');
    };
    const text = 'x'.repeat(SLICE_CHARS + 3);
    const estimate = await estimateInputTokensInSlices(request(text), count, { exactBudgetMs: 0 });
    const linear = Math.ceil(SLICE_CHARS * FLOOR_TOKENS_PER_CHAR) + Math.ceil(3 * FLOOR_TOKENS_PER_CHAR);
    expect(estimate).toBe(estimateInputTokens(request(text), () => linear));
  });

  it('estimates the rest at the rate counted so far when that is above the floor, rounding each slice up', async () => {
    let clock = 0;
    // One token per character, and the first call spends the whole budget.
    const perCharacter = (text: string) => {
      clock += 50;
      return text.length;
    };
    const text = `${'a '.repeat(SLICE_CHARS)}a`;
    const estimate = await estimateInputTokensInSlices(request(text), perCharacter, {
      now: () => clock,
      yieldToLoop: async () => {},
      exactBudgetMs: 50,
    });
    expect(estimate).toBe(estimateInputTokens(request(text), () => SLICE_CHARS * 2 + 1));

    clock = 0;
    const quarterPerCharacter = (text: string) => {
      clock += 50;
      return text.length / 4;
    };
    const odd = `${'a '.repeat(SLICE_CHARS / 2)}a`;
    const floored = await estimateInputTokensInSlices(request(odd), quarterPerCharacter, {
      now: () => clock,
      yieldToLoop: async () => {},
      exactBudgetMs: 50,
    });
    // The last slice, one character, is estimated at the floor rate of 0.5 and rounded up to one token.
    expect(floored).toBe(estimateInputTokens(request(odd), () => SLICE_CHARS / 4 + 1));
  });
});
