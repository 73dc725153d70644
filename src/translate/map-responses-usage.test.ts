import { describe, expect, it } from 'vitest';
import type { ResponsesUsage } from '../protocol/responses.js';
import { mapResponsesUsage } from './map-responses-usage.js';

const usage = (value: Record<string, unknown>): ResponsesUsage => value;

describe('mapResponsesUsage', () => {
  it('takes the cached and cache-written tokens out of the input count and reports them apart', () => {
    expect(
      mapResponsesUsage(
        usage({
          input_tokens: 540,
          output_tokens: 60,
          input_tokens_details: { cached_tokens: 8, cache_write_tokens: 32 },
          output_tokens_details: { reasoning_tokens: 12 },
        }),
      ),
    ).toStrictEqual({
      input_tokens: 500,
      output_tokens: 60,
      cache_creation_input_tokens: 32,
      cache_read_input_tokens: 8,
    });
  });

  it('maps missing usage to zeros', () => {
    const zeros = {
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    };
    expect(mapResponsesUsage(undefined)).toStrictEqual(zeros);
    expect(mapResponsesUsage(null)).toStrictEqual(zeros);
    expect(mapResponsesUsage(usage({}))).toStrictEqual(zeros);
  });

  it('bills the reasoning tokens when a server counts them apart from, and above, the output tokens', () => {
    expect(
      mapResponsesUsage(
        usage({ input_tokens: 5, output_tokens: 3, output_tokens_details: { reasoning_tokens: 40 } }),
      ),
    ).toStrictEqual({
      input_tokens: 5,
      output_tokens: 40,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
  });

  it('never reports fewer than zero uncached input tokens', () => {
    expect(
      mapResponsesUsage(
        usage({ input_tokens: 10, output_tokens: 1, input_tokens_details: { cached_tokens: 25 } }),
      ),
    ).toStrictEqual({
      input_tokens: 0,
      output_tokens: 1,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 25,
    });
  });

  it('reads counts that are not finite numbers as absent, negative ones as 0, and rounds fractions down', () => {
    expect(
      mapResponsesUsage(
        usage({
          input_tokens: 12.9,
          output_tokens: '7',
          input_tokens_details: { cached_tokens: -4, cache_write_tokens: Number.POSITIVE_INFINITY },
          output_tokens_details: { reasoning_tokens: Number.NaN },
        }),
      ),
    ).toStrictEqual({
      input_tokens: 12,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
  });

  it('ignores token details that are not objects', () => {
    expect(
      mapResponsesUsage(
        usage({
          input_tokens: 9,
          output_tokens: 2,
          input_tokens_details: 'cached',
          output_tokens_details: [50],
        }),
      ),
    ).toStrictEqual({
      input_tokens: 9,
      output_tokens: 2,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
  });
});
