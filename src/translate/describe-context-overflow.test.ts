import { describe, expect, it } from 'vitest';
import { describeContextOverflow } from './describe-context-overflow.js';
import { mapUpstreamError } from './map-upstream-error.js';

describe('describeContextOverflow', () => {
  it('states both numbers llama.cpp gives', () => {
    expect(
      describeContextOverflow({
        error: {
          code: 400,
          type: 'exceed_context_size_error',
          message: 'x',
          n_prompt_tokens: 5000,
          n_ctx: 4096,
        },
      }),
    ).toBe('prompt is too long: 5000 tokens > 4096 maximum');
  });

  it('says only that the prompt is too long when the numbers are missing or not counts', () => {
    expect(describeContextOverflow({ error: { type: 'exceed_context_size_error', n_ctx: 4096 } })).toBe(
      'prompt is too long',
    );
    expect(
      describeContextOverflow({
        error: { type: 'exceed_context_size_error', n_prompt_tokens: '5000', n_ctx: 4096 },
      }),
    ).toBe('prompt is too long');
    expect(
      describeContextOverflow({
        error: { type: 'exceed_context_size_error', n_prompt_tokens: -1, n_ctx: 4096 },
      }),
    ).toBe('prompt is too long');
  });

  it('states a count of zero as a count', () => {
    expect(
      describeContextOverflow({
        error: { type: 'exceed_context_size_error', n_prompt_tokens: 12, n_ctx: 0 },
      }),
    ).toBe('prompt is too long: 12 tokens > 0 maximum');
  });

  it('recognises OpenAI’s context_length_exceeded code', () => {
    expect(
      describeContextOverflow({
        error: {
          message: "This model's maximum context length is 128000 tokens.",
          code: 'context_length_exceeded',
        },
      }),
    ).toBe('prompt is too long');
  });

  it('leaves every other body alone', () => {
    for (const body of [
      undefined,
      'text',
      { error: 'exceed_context_size_error' },
      { error: { type: 'invalid_request_error', message: 'prompt is long' } },
      { type: 'exceed_context_size_error' },
    ]) {
      expect(describeContextOverflow(body)).toBeUndefined();
    }
  });
});

describe('mapUpstreamError with a context overflow', () => {
  const overflow = JSON.stringify({
    error: {
      code: 400,
      message: 'request (559 tokens) exceeds the available context size (256 tokens)',
      type: 'exceed_context_size_error',
      n_prompt_tokens: 559,
      n_ctx: 256,
    },
  });

  it('puts Anthropic’s words before the upstream’s on a 400, keeping the status first', () => {
    const error = mapUpstreamError({ status: 400, bodyText: overflow, provider: 'tpx' });
    expect(error.message).toBe(
      '400 exceed_context_size_error: prompt is too long: 559 tokens > 256 maximum; request (559 tokens) exceeds the available context size (256 tokens)',
    );
    expect(error.status).toBe(400);
    expect(error.body.error.type).toBe('invalid_request_error');
  });

  it('leaves a non-400 answer with such a body as the upstream said it', () => {
    const error = mapUpstreamError({ status: 500, bodyText: overflow, provider: 'tpx' });
    expect(error.message).not.toContain('prompt is too long');
  });
});
