import { describe, expect, it } from 'vitest';
import { estimateInputTokens } from '../translate/estimate-input-tokens.js';
import { loadTokenCounter } from './load-token-counter.js';

describe('loadTokenCounter', () => {
  it('counts with cl100k_base: a known sentence is nine tokens', async () => {
    const countText = await loadTokenCounter();
    expect(countText('The quick brown fox jumps over the lazy dog')).toBe(9);
  });

  it('counts special-token strings as ordinary text instead of refusing them', async () => {
    const countText = await loadTokenCounter();
    expect(countText('<|endoftext|>')).toBeGreaterThan(1);
  });

  it('loads once: every call answers with the same counter', async () => {
    expect(await loadTokenCounter()).toBe(await loadTokenCounter());
  });

  it('gives estimates at least as high as the tokenizer’s own count of the text', async () => {
    const countText = await loadTokenCounter();
    const text = 'The quick brown fox jumps over the lazy dog. <|endoftext|> '.repeat(20);
    const estimate = estimateInputTokens(
      { model: 'm', messages: [{ role: 'user', content: text }] },
      countText,
    );
    expect(estimate).toBeGreaterThan(countText(text));
  });
});
