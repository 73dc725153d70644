import { describe, expect, it } from 'vitest';
import { capOutputTokens, contextMargin, readConfiguredCap } from './output-cap.js';

describe('capOutputTokens', () => {
  it('keeps the requested max_tokens, with no reason, when nothing caps it', () => {
    expect(capOutputTokens({ requested: 100 })).toStrictEqual({ maxTokens: 100 });
  });

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

describe('contextMargin', () => {
  it('keeps 5 % of the window free, rounded up, and never less than 64 tokens', () => {
    expect([
      contextMargin(1_000),
      contextMargin(1_280),
      contextMargin(1_300),
      contextMargin(32_768),
    ]).toStrictEqual([64, 64, 65, 1639]);
  });
});

describe('capOutputTokens: exact caps and reasons', () => {
  it('gives the room in the window and names window, input and margin', () => {
    expect(
      capOutputTokens({ requested: 128_000, contextWindow: 32_768, estimatedInputTokens: 20_000 }),
    ).toStrictEqual({
      maxTokens: 11_129,
      reason: 'the context window of 32768 tokens, less about 20000 input tokens and a margin of 1639',
    });
  });

  it('counts no input when there is no estimate', () => {
    expect(capOutputTokens({ requested: 128_000, contextWindow: 1_000 })).toStrictEqual({
      maxTokens: 936,
      reason: 'the context window of 1000 tokens, less about 0 input tokens and a margin of 64',
    });
  });

  it('leaves a request that fits in the window, or equals the configured cap, as it is', () => {
    expect(capOutputTokens({ requested: 936, contextWindow: 1_000 })).toStrictEqual({ maxTokens: 936 });
    expect(capOutputTokens({ requested: 8_000, configuredCap: 8_000 })).toStrictEqual({ maxTokens: 8_000 });
    expect(capOutputTokens({ requested: 100, configuredCap: 8_000 })).toStrictEqual({ maxTokens: 100 });
  });

  it('sends a single token when exactly one fits, and refuses when none does', () => {
    expect(
      capOutputTokens({ requested: 100, contextWindow: 1_000, estimatedInputTokens: 935 }),
    ).toStrictEqual({
      maxTokens: 1,
      reason: 'the context window of 1000 tokens, less about 935 input tokens and a margin of 64',
    });
    let caught: unknown;
    try {
      capOutputTokens({ requested: 100, contextWindow: 1_000, estimatedInputTokens: 936 });
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({
      code: 'MODEL_EINVAL',
      status: 400,
      retryable: false,
      body: { type: 'error', error: { type: 'invalid_request_error' } },
      message:
        "prompt is too long: about 936 input tokens, and the upstream's context window is 1000 tokens (with a " +
        'margin of 64); shorten or compact the conversation, or give the model server a larger context',
    });
  });

  it('names the window once it cuts below the configured cap', () => {
    expect(
      capOutputTokens({
        requested: 128_000,
        configuredCap: 8_000,
        contextWindow: 1_000,
        estimatedInputTokens: 0,
      }),
    ).toStrictEqual({
      maxTokens: 936,
      reason: 'the context window of 1000 tokens, less about 0 input tokens and a margin of 64',
    });
  });
});

describe('readConfiguredCap: refusals', () => {
  const refusal = (option: number | undefined, env: Record<string, string>) => {
    try {
      readConfiguredCap(option, env);
    } catch (error) {
      expect(error).toMatchObject({ code: 'MODEL_ECONFIG' });
      return (error as Error).message;
    }
    throw new Error('expected a refusal');
  };

  it('names the variable or the option and quotes the value', () => {
    expect(refusal(undefined, { TPX_MAX_TOKENS: 'lots' })).toBe(
      'TPX_MAX_TOKENS must be a whole number of tokens above 0, got "lots"',
    );
    expect(refusal(undefined, { TPX_MAX_TOKENS: '-3' })).toBe(
      'TPX_MAX_TOKENS must be a whole number of tokens above 0, got "-3"',
    );
    expect(refusal(0, {})).toBe('the maxOutputTokens option must be a whole number of tokens above 0, got 0');
    expect(refusal(2.5, { TPX_MAX_TOKENS: '5' })).toBe(
      'the maxOutputTokens option must be a whole number of tokens above 0, got 2.5',
    );
  });

  it('treats a blank TPX_MAX_TOKENS as unset, and accepts 1', () => {
    expect(readConfiguredCap(undefined, { TPX_MAX_TOKENS: '  ' })).toBeUndefined();
    expect(readConfiguredCap(1, {})).toBe(1);
    expect(readConfiguredCap(undefined, { TPX_MAX_TOKENS: '1' })).toBe(1);
  });
});
