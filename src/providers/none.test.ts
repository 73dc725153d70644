import { describe, expect, it } from 'vitest';
import { TransportError } from '../errors.js';
import type { MessagesRequest } from '../protocol/messages.js';
import { noneProvider } from './none.js';
import type { AttemptContext } from './http-exchange.js';

const request: MessagesRequest = {
  model: 'any-model',
  max_tokens: 16,
  messages: [{ role: 'user', content: 'hello' }],
};
// The none provider never looks at its context: it makes no network I/O at all.
const context = {} as AttemptContext;
const report = (): void => {
  throw new Error('the none provider reported an upstream answer, but it has no upstream');
};

function expectNoCredentials(error: unknown): void {
  expect(error).toBeInstanceOf(TransportError);
  const failure = error as TransportError;
  expect({
    code: failure.code,
    status: failure.status,
    retryable: failure.retryable,
    provider: failure.provider,
    message: failure.message,
    body: failure.body,
  }).toStrictEqual({
    code: 'MODEL_EAUTH',
    status: 401,
    retryable: false,
    provider: 'none',
    message:
      'no model credentials are configured: set ANTHROPIC_API_KEY to use Anthropic, or TPX_OAUTH_TOKEN (or TPX_OAUTH_TOKEN_FILE) together with TPX_BASE_URL to use an OpenAI-compatible endpoint',
    body: {
      type: 'error',
      error: {
        type: 'authentication_error',
        message:
          'no model credentials are configured: set ANTHROPIC_API_KEY to use Anthropic, or TPX_OAUTH_TOKEN (or TPX_OAUTH_TOKEN_FILE) together with TPX_BASE_URL to use an OpenAI-compatible endpoint',
      },
    },
  });
}

describe('the none provider', () => {
  it('is named none', () => {
    expect(noneProvider.name).toBe('none');
  });

  it('refuses a send with a 401 MODEL_EAUTH that says which credentials to set', async () => {
    expectNoCredentials(
      await noneProvider.send(request, {}, context, report).catch((error: unknown) => error),
    );
  });

  it('refuses a stream on its first step, before any event', async () => {
    const iterator = noneProvider.stream(request, {}, context, report);
    expectNoCredentials(await iterator.next().catch((error: unknown) => error));
  });

  it('refuses count_tokens and the model list the same way', async () => {
    expectNoCredentials(
      await noneProvider.countTokens!(
        { model: 'any-model', messages: request.messages },
        {},
        context,
        report,
      ).catch((error: unknown) => error),
    );
    expectNoCredentials(await noneProvider.listModels!({}, context, report).catch((error: unknown) => error));
  });
});
