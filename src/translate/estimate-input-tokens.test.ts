import { describe, expect, it } from 'vitest';
import {
  IMAGE_TOKENS,
  PER_MESSAGE_TOKENS,
  TEXT_FACTOR,
  TOOLS_OVERHEAD_TOKENS,
  estimateInputTokens,
  loadTokenCounter,
} from './estimate-input-tokens.js';

/** One token per character: makes the arithmetic visible. */
const byLength = (text: string) => text.length;

describe('estimateInputTokens', () => {
  it('counts system and message text, scaled up, plus a per-message allowance', () => {
    const estimate = estimateInputTokens(
      { model: 'm', system: 'abcd', messages: [{ role: 'user', content: 'hello' }] },
      byLength,
    );
    expect(estimate).toBe(Math.ceil(9 * TEXT_FACTOR) + PER_MESSAGE_TOKENS);
  });

  it('counts tool definitions as JSON plus the tool-use preamble', () => {
    const tool = { name: 'add', input_schema: { type: 'object' } };
    const estimate = estimateInputTokens({ model: 'm', messages: [], tools: [tool] }, byLength);
    expect(estimate).toBe(Math.ceil(JSON.stringify(tool).length * TEXT_FACTOR) + TOOLS_OVERHEAD_TOKENS);
  });

  it('counts tool calls, tool results and images', () => {
    const estimate = estimateInputTokens(
      {
        model: 'm',
        messages: [
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'add', input: { a: 1 } }] },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 't1',
                content: [
                  { type: 'text', text: '42' },
                  { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
                ],
              },
            ],
          },
        ],
      },
      byLength,
    );
    const text = 'add'.length + '{"a":1}'.length + '42'.length;
    expect(estimate).toBe(Math.ceil(text * TEXT_FACTOR) + 2 * PER_MESSAGE_TOKENS + IMAGE_TOKENS);
  });

  it('tolerates shapes it cannot read', () => {
    expect(estimateInputTokens({ messages: 'nonsense', system: 7 }, byLength)).toBe(0);
  });

  it('counts at least as many tokens as the cl100k tokenizer finds in the text', async () => {
    const countText = await loadTokenCounter();
    const text = 'The quick brown fox jumps over the lazy dog. <|endoftext|> '.repeat(20);
    const estimate = estimateInputTokens(
      { model: 'm', messages: [{ role: 'user', content: text }] },
      countText,
    );
    expect(estimate).toBeGreaterThan(countText(text));
  });
});
