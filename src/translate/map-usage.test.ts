import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChatCompletionUsage } from '../protocol/chat-completions.js';
import { mapUsage } from './map-usage.js';

describe('mapUsage', () => {
  it.each<[string, ChatCompletionUsage | null | undefined, ReturnType<typeof mapUsage>]>([
    [
      'OpenAI usage without caching',
      {
        prompt_tokens: 53,
        completion_tokens: 15,
        total_tokens: 68,
        prompt_tokens_details: { cached_tokens: 0 },
      },
      { input_tokens: 53, output_tokens: 15, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    ],
    [
      'cached_tokens subtracted from input (xAI: 291 prompt, 290 cached)',
      {
        prompt_tokens: 291,
        completion_tokens: 26,
        total_tokens: 513,
        prompt_tokens_details: { cached_tokens: 290 },
      },
      { input_tokens: 1, output_tokens: 26, cache_creation_input_tokens: 0, cache_read_input_tokens: 290 },
    ],
    [
      'DeepSeek prompt_cache_hit_tokens when cached_tokens is absent',
      {
        prompt_tokens: 339,
        completion_tokens: 83,
        prompt_cache_hit_tokens: 320,
        prompt_cache_miss_tokens: 19,
      },
      { input_tokens: 19, output_tokens: 83, cache_creation_input_tokens: 0, cache_read_input_tokens: 320 },
    ],
    [
      'cached_tokens preferred over prompt_cache_hit_tokens',
      {
        prompt_tokens: 100,
        completion_tokens: 1,
        prompt_tokens_details: { cached_tokens: 10 },
        prompt_cache_hit_tokens: 90,
      },
      { input_tokens: 90, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 10 },
    ],
    [
      'cache_write_tokens as cache creation, subtracted from input',
      {
        prompt_tokens: 1000,
        completion_tokens: 5,
        prompt_tokens_details: { cached_tokens: 200, cache_write_tokens: 700 },
      },
      { input_tokens: 100, output_tokens: 5, cache_creation_input_tokens: 700, cache_read_input_tokens: 200 },
    ],
    [
      'total_tokens larger than prompt + completion ignored (Gemini hidden thinking, quirk 21)',
      { prompt_tokens: 35, completion_tokens: 12, total_tokens: 109 },
      { input_tokens: 35, output_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    ],
    [
      'missing usage',
      undefined,
      { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    ],
    [
      'null usage',
      null,
      { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    ],
    [
      'null counts and null details',
      { prompt_tokens: null, completion_tokens: null, prompt_tokens_details: null },
      { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    ],
    [
      'more cached than prompt tokens clamped to zero input',
      { prompt_tokens: 5, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 9 } },
      { input_tokens: 0, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 9 },
    ],
    [
      'negative, fractional and non-numeric counts sanitised',
      { prompt_tokens: 10.7, completion_tokens: -3, prompt_tokens_details: { cached_tokens: Number.NaN } },
      { input_tokens: 10, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    ],
  ])('maps %s', (_name, usage, expected) => {
    expect(mapUsage(usage)).toEqual(expected);
  });

  it('reads string counts as missing rather than concatenating them', () => {
    const usage = { prompt_tokens: '12', completion_tokens: '3' } as unknown as ChatCompletionUsage;
    expect(mapUsage(usage)).toEqual({
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
  });

  it('reads a count above the largest safe integer as that integer, so the input total adds up exactly', () => {
    const mapped = mapUsage({
      prompt_tokens: 2.9519800822266564e16,
      completion_tokens: 1e300,
      prompt_tokens_details: { cached_tokens: 3 },
    });
    expect(mapped).toStrictEqual({
      input_tokens: Number.MAX_SAFE_INTEGER - 3,
      output_tokens: Number.MAX_SAFE_INTEGER,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 3,
    });
    expect(mapped.input_tokens + mapped.cache_read_input_tokens!).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('never reports a negative or fractional count, and total input equals prompt tokens when caches fit', () => {
    const count = fc.option(fc.oneof(fc.integer({ min: -5, max: 10_000 }), fc.double()), { nil: undefined });
    fc.assert(
      fc.property(count, count, count, count, count, (prompt, completion, cached, write, hit) => {
        const usage: ChatCompletionUsage = {
          prompt_tokens: prompt ?? null,
          completion_tokens: completion ?? null,
          prompt_tokens_details: { cached_tokens: cached ?? null, cache_write_tokens: write ?? null },
          prompt_cache_hit_tokens: hit ?? null,
        };
        const mapped = mapUsage(usage);
        for (const value of [
          mapped.input_tokens,
          mapped.output_tokens,
          mapped.cache_creation_input_tokens,
          mapped.cache_read_input_tokens,
        ]) {
          expect(Number.isInteger(value)).toBe(true);
          expect(value).toBeGreaterThanOrEqual(0);
        }
        const total =
          mapped.input_tokens + mapped.cache_read_input_tokens! + mapped.cache_creation_input_tokens!;
        const promptTokens = mapUsage({ prompt_tokens: prompt ?? null }).input_tokens;
        if (mapped.cache_read_input_tokens! + mapped.cache_creation_input_tokens! <= promptTokens) {
          expect(total).toBe(promptTokens);
        }
      }),
    );
  });
});
