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

  it('states the counts vLLM gives in its message when the prompt alone is over the window', () => {
    expect(
      describeContextOverflow({
        object: 'error',
        message:
          "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4800 in the messages, 200 in the completion). Please reduce the length of the messages or completion.",
        type: 'BadRequestError',
        param: null,
        code: 400,
      }),
    ).toBe('prompt is too long: 4800 tokens > 4096 maximum');
    expect(
      describeContextOverflow({
        error: {
          message:
            "This model's maximum context length is 2048 tokens. However, your request has 3001 input tokens. Please reduce the length of the input messages.",
          type: 'BadRequestError',
          param: null,
          code: 400,
        },
      }),
    ).toBe('prompt is too long: 3001 tokens > 2048 maximum');
  });

  it('says in Anthropic’s words that max_tokens does not fit when the prompt alone does', () => {
    const words = (input: number, output: number, limit: number) =>
      `input length and \`max_tokens\` exceed context limit: ${input} + ${output} > ${limit}, decrease input length or \`max_tokens\` and try again`;
    expect(
      describeContextOverflow({
        error: {
          message:
            "'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). None",
          type: 'BadRequestError',
          param: null,
          code: 400,
        },
      }),
    ).toBe(words(2778, 8000, 4096));
    expect(
      describeContextOverflow({
        object: 'error',
        message:
          "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4096 in the messages, 904 in the completion). Please reduce the length of the messages or completion.",
      }),
    ).toBe(words(4096, 904, 4096));
    expect(
      describeContextOverflow({
        error: {
          message:
            "Requested token count exceeds the model's maximum context length of 202752 tokens. You requested a total of 202941 tokens: 170941 tokens from the input messages and 32000 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.",
        },
      }),
    ).toBe(words(170941, 32000, 202752));
  });

  it('states the count of OpenAI’s message under its context_length_exceeded code', () => {
    expect(
      describeContextOverflow({
        error: {
          message:
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9120 tokens. Please reduce the length of the messages.",
          code: 'context_length_exceeded',
        },
      }),
    ).toBe('prompt is too long: 9120 tokens > 8192 maximum');
  });

  it('leaves every other body alone', () => {
    for (const body of [
      undefined,
      'text',
      { error: 'exceed_context_size_error' },
      { error: { type: 'invalid_request_error', message: 'prompt is long' } },
      { type: 'exceed_context_size_error' },
      { message: "This model's maximum context length is 4096 tokens." },
      {
        error: { message: 'maximum context length is many tokens. However, your request has 9 input tokens' },
      },
      { error: { message: 42, code: 'rate_limited' } },
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

  it('says a vLLM max_tokens overflow in Anthropic’s words before vLLM’s own', () => {
    const vllm =
      "'max_tokens' or 'max_completion_tokens' is too large: 900. This model's maximum context length is 1024 tokens and your request has 300 input tokens (900 > 1024 - 300). None";
    const error = mapUpstreamError({
      status: 400,
      bodyText: JSON.stringify({ error: { message: vllm, type: 'BadRequestError', param: null, code: 400 } }),
      provider: 'tpx',
    });
    expect(error.message).toBe(
      `400 BadRequestError: input length and \`max_tokens\` exceed context limit: 300 + 900 > 1024, decrease input length or \`max_tokens\` and try again; ${vllm}`,
    );
    expect([error.status, error.body.error.type, error.retryable]).toStrictEqual([
      400,
      'invalid_request_error',
      false,
    ]);
  });

  it('leaves a non-400 answer with such a body as the upstream said it', () => {
    const error = mapUpstreamError({ status: 500, bodyText: overflow, provider: 'tpx' });
    expect(error.message).not.toContain('prompt is too long');
  });
});
