import { describe, expect, it } from 'vitest';
import { estimateInputTokens } from './estimate-input-tokens.js';

/**
 * One token per character: makes the arithmetic visible. The expected values below are written out as
 * numbers (text × 1.25 rounded up, + 8 per message, + 400 with tools, 1,600 per image, one token per 16
 * decoded document bytes), so a change to any factor fails a test.
 */
const byLength = (text: string) => text.length;

describe('estimateInputTokens', () => {
  it('counts system and message text, scaled up, plus a per-message allowance', () => {
    const estimate = estimateInputTokens(
      { model: 'm', system: 'abcd', messages: [{ role: 'user', content: 'hello' }] },
      byLength,
    );
    expect(estimate).toBe(20); // ceil(9 × 1.25) + 8
  });

  it('counts tool definitions as JSON plus the tool-use preamble', () => {
    const tool = { name: 'add', input_schema: { type: 'object' } };
    const estimate = estimateInputTokens({ model: 'm', messages: [], tools: [tool] }, byLength);
    expect(JSON.stringify(tool)).toHaveLength(47);
    expect(estimate).toBe(459); // ceil(47 × 1.25) + 400
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
    // 'add' + '{"a":1}' + '42' = 12 characters: ceil(12 × 1.25) + 2 × 8 + 1,600
    expect(estimate).toBe(1631);
  });

  it('counts the example in its documentation as 11', () => {
    expect(estimateInputTokens({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, byLength)).toBe(
      11,
    );
  });

  it('counts thinking as text, redacted thinking as a quarter of its data, unknown blocks as their JSON', () => {
    const content = [
      { type: 'thinking', thinking: 'abcdefgh', signature: 's' },
      { type: 'redacted_thinking', data: 'x'.repeat(20) },
      { type: 'mystery', v: 1 },
    ];
    // thinking 8 + '{"type":"mystery","v":1}' 24 = 32 → 40; redacted ceil(20 / 4) = 5; one message 8
    expect(estimateInputTokens({ messages: [{ role: 'assistant', content }] }, byLength)).toBe(53);
  });

  it('counts a base64 document by its decoded size, a text document as text, a URL document as an image', () => {
    const documents = [
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'A'.repeat(64) } },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'abcd' } },
      { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'efgh' }] } },
      { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
    ];
    // 64 base64 characters = 48 bytes → 3; text 8 → 10; the URL 1,600; one message 8
    expect(estimateInputTokens({ messages: [{ role: 'user', content: documents }] }, byLength)).toBe(1621);
  });

  it('skips fields of the wrong type, counting only the per-message allowance for them', () => {
    const content = [
      null,
      5,
      [],
      { type: 'text', text: 5 },
      { type: 'thinking', thinking: null },
      { type: 'redacted_thinking', data: 7 },
      { type: 'tool_use', name: 9, input: { a: 1 } },
      { type: 'document', source: 'x' },
      { type: 'document', source: { type: 'text', data: 3 } },
      { type: 'document', source: { type: 'base64', data: null } },
    ];
    const request = { messages: [null, 'text', [], { role: 'user', content }], tools: [] };
    // Four messages (4 × 8) and the tool input '{"a":1}' (ceil(7 × 1.25) = 9); an empty tools list
    // adds no preamble.
    expect(estimateInputTokens(request, byLength)).toBe(41);
  });

  it('tolerates shapes it cannot read', () => {
    expect(estimateInputTokens({ messages: 'nonsense', system: 7 }, byLength)).toBe(0);
  });
});
