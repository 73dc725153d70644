import { describe, expect, it } from 'vitest';
import { capOutputTokens, contextMargin, readConfiguredCap } from './output-cap.js';

describe('capOutputTokens', () => {
  it('leaves max_tokens alone when nothing caps it', () => {
    expect(capOutputTokens({ requested: 128_000 })).toEqual({ maxTokens: 128_000 });
  });

  it('caps at the configured cap', () => {
    expect(capOutputTokens({ requested: 128_000, configuredCap: 8_000 })).toEqual({
      maxTokens: 8_000,
      reason: 'TPX_MAX_TOKENS is 8000',
    });
  });

  it('caps at the window less the estimated input and the margin', () => {
    const cap = capOutputTokens({ requested: 128_000, contextWindow: 32_768, estimatedInputTokens: 20_000 });
    expect(cap.maxTokens).toBe(32_768 - 20_000 - contextMargin(32_768));
    expect(cap.reason).toContain('context window of 32768 tokens');
  });

  it('keeps the smaller of the configured cap and the room in the window', () => {
    const cap = capOutputTokens({
      requested: 128_000,
      configuredCap: 4_000,
      contextWindow: 32_768,
      estimatedInputTokens: 1_000,
    });
    expect(cap.maxTokens).toBe(4_000);
  });

  it('refuses a prompt that leaves no room, as a 400 invalid_request_error', () => {
    expect(() =>
      capOutputTokens({ requested: 100, contextWindow: 4_096, estimatedInputTokens: 4_000 }),
    ).toThrow(
      /prompt is too long: about 4000 input tokens, and the upstream's context window is 4096 tokens/,
    );
  });
});

describe('readConfiguredCap', () => {
  it('prefers the option, reads TPX_MAX_TOKENS otherwise, and refuses anything but a positive whole number', () => {
    expect(readConfiguredCap(100, { TPX_MAX_TOKENS: '5' })).toBe(100);
    expect(readConfiguredCap(undefined, { TPX_MAX_TOKENS: ' 5 ' })).toBe(5);
    expect(readConfiguredCap(undefined, {})).toBeUndefined();
    expect(() => readConfiguredCap(undefined, { TPX_MAX_TOKENS: '0' })).toThrow(/TPX_MAX_TOKENS/);
    expect(() => readConfiguredCap(1.5, {})).toThrow(/maxOutputTokens/);
  });
});
