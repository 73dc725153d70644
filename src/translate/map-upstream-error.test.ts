import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isTransportError } from '../errors.js';
import { mapStreamErrorObject } from './map-stream-error-object.js';
import { mapUpstreamError } from './map-upstream-error.js';

const FIXTURES = new URL('./__fixtures__/upstream-openai-compat/', import.meta.url);
const fixture = (path: string): string => readFileSync(new URL(path, FIXTURES), 'utf8');

const openAiBody = (message: string, code: string | null = null, type = 'invalid_request_error'): string =>
  JSON.stringify({ error: { message, type, param: null, code } });

describe('mapUpstreamError: statuses (docs/protocol.md D.7)', () => {
  it.each([
    // [upstream status, body code, expected status, expected type, retryable]
    [400, null, 400, 'invalid_request_error', false],
    [422, null, 400, 'invalid_request_error', false],
    [401, 'invalid_api_key', 401, 'authentication_error', false],
    [402, null, 402, 'billing_error', false],
    [403, null, 403, 'permission_error', false],
    [404, 'model_not_found', 404, 'not_found_error', false],
    [405, null, 405, 'invalid_request_error', false],
    [408, null, 504, 'timeout_error', true],
    [409, null, 409, 'conflict_error', true],
    [413, null, 413, 'request_too_large', false],
    [429, 'rate_limit_exceeded', 429, 'rate_limit_error', true],
    [429, 'insufficient_quota', 402, 'billing_error', false],
    [500, null, 500, 'api_error', true],
    [502, null, 502, 'api_error', true],
    [503, null, 529, 'overloaded_error', true],
    [504, null, 504, 'timeout_error', true],
    [529, null, 529, 'overloaded_error', true],
    [500, 'server_is_overloaded', 529, 'overloaded_error', true],
    [503, 'slow_down', 529, 'overloaded_error', true],
  ] as const)(
    'maps an OpenAI-style %i with code %j to %i %s (retryable: %s)',
    (upstreamStatus, code, status, type, retryable) => {
      const error = mapUpstreamError({
        status: upstreamStatus,
        bodyText: openAiBody('upstream says no', code),
        contentType: 'application/json',
        provider: 'tpx',
      });
      expect(error.code).toBe(status === 401 ? 'MODEL_EAUTH' : 'MODEL_EHTTP');
      expect(error.status).toBe(status);
      expect(error.body.error.type).toBe(type);
      expect(error.retryable).toBe(retryable);
      expect(error.provider).toBe('tpx');
      expect(error.message.startsWith(`${upstreamStatus} `)).toBe(true);
      expect(error.message).toContain('upstream says no');
      expect(error.body).toEqual({ type: 'error', error: { type, message: error.message } });
    },
  );

  it('maps a 500 whose message says overloaded to a 529 overloaded_error', () => {
    const error = mapUpstreamError({
      status: 500,
      bodyText: openAiBody(
        'The engine is currently overloaded, please try again later',
        null,
        'server_error',
      ),
      provider: 'tpx',
    });
    expect([error.status, error.body.error.type, error.retryable]).toEqual([529, 'overloaded_error', true]);
  });

  it('does not read "overloaded" in a 400 message as overload', () => {
    const error = mapUpstreamError({
      status: 400,
      bodyText: openAiBody('the context is overloaded with tools'),
      provider: 'tpx',
    });
    expect([error.status, error.body.error.type]).toEqual([400, 'invalid_request_error']);
  });

  it('maps insufficient_quota given as the error type, not the code, to billing_error', () => {
    const error = mapUpstreamError({
      status: 429,
      bodyText: openAiBody('You exceeded your current quota', null, 'insufficient_quota'),
      provider: 'tpx',
    });
    expect([error.status, error.body.error.type, error.retryable]).toEqual([402, 'billing_error', false]);
  });

  it('maps a Messages error body under a status outside 400–599 to a non-retryable 502, keeping its type', () => {
    const bodyText = JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'busy' } });
    const error = mapUpstreamError({ status: 200, bodyText, provider: 'anthropic' });
    expect([error.code, error.status, error.body.error.type, error.retryable, error.provider]).toStrictEqual([
      'MODEL_EHTTP',
      502,
      'overloaded_error',
      false,
      'anthropic',
    ]);
    expect(error.message).toBe('200 overloaded_error: busy');
  });

  it('maps a status outside 400–599 to a non-retryable 502 api_error', () => {
    const error = mapUpstreamError({ status: 302, bodyText: '', provider: 'tpx' });
    expect([error.status, error.body.error.type, error.retryable]).toEqual([502, 'api_error', false]);
    expect(error.message).toBe('upstream answered 302 with an empty body');
  });
});

describe('mapUpstreamError: retry-after, request ids and kept headers', () => {
  it('reads retry-after in seconds into retryAfterMs and keeps the header', () => {
    const error = mapUpstreamError({
      status: 429,
      bodyText: openAiBody('Rate limit reached for gpt-4o-mini', 'rate_limit_exceeded', 'requests'),
      headers: { 'Retry-After': '7', 'x-ratelimit-remaining-requests': '0', 'set-cookie': 'secret=1' },
      provider: 'tpx',
    });
    expect(error.retryAfterMs).toBe(7000);
    expect(error.headers).toEqual({ 'retry-after': '7', 'x-ratelimit-remaining-requests': '0' });
    expect(error.message).toBe('429 rate_limit_exceeded: Rate limit reached for gpt-4o-mini');
  });

  it('prefers retry-after-ms over retry-after', () => {
    const error = mapUpstreamError({
      status: 429,
      bodyText: openAiBody('slow', 'rate_limit_exceeded'),
      headers: { 'retry-after-ms': '1500', 'retry-after': '9' },
      provider: 'tpx',
    });
    expect(error.retryAfterMs).toBe(1500);
  });

  it('leaves an HTTP-date retry-after to the caller but keeps the header', () => {
    const date = 'Wed, 21 Oct 2015 07:28:00 GMT';
    const error = mapUpstreamError({
      status: 503,
      bodyText: '',
      headers: { 'retry-after': date },
      provider: 'tpx',
    });
    expect(error.retryAfterMs).toBeUndefined();
    expect(error.headers).toEqual({ 'retry-after': date });
  });

  it('takes the request id from request-id, then x-request-id, then the body', () => {
    const body = fixture('alibaba/error.qwen-plus.malformed-tool-arguments.json');
    const fromHeader = mapUpstreamError({
      status: 400,
      bodyText: body,
      headers: { 'x-request-id': 'req_x' },
      provider: 'tpx',
    });
    expect(fromHeader.requestId).toBe('req_x');
    expect(fromHeader.body.request_id).toBe('req_x');
    const preferred = mapUpstreamError({
      status: 400,
      bodyText: body,
      headers: { 'x-request-id': 'req_x', 'request-id': 'req_a' },
      provider: 'tpx',
    });
    expect(preferred.requestId).toBe('req_a');
    const fromBody = mapUpstreamError({ status: 400, bodyText: body, provider: 'tpx' });
    expect(fromBody.requestId).toBe('46d4b65d-a6a7-9d02-a198-ce9eab53accd');
  });

  it('lets x-should-retry override retryable', () => {
    const no = mapUpstreamError({
      status: 500,
      bodyText: '',
      headers: { 'x-should-retry': 'false' },
      provider: 'tpx',
    });
    expect(no.retryable).toBe(false);
    const yes = mapUpstreamError({
      status: 400,
      bodyText: '',
      headers: { 'x-should-retry': 'true' },
      provider: 'tpx',
    });
    expect(yes.retryable).toBe(true);
  });
});

describe('mapUpstreamError: recorded error bodies', () => {
  it('maps the Groq 404 model-not-found body (no param)', () => {
    const error = mapUpstreamError({
      status: 404,
      bodyText: fixture('groq/error.model-not-found.404.json'),
      provider: 'tpx',
    });
    expect([error.status, error.body.error.type, error.retryable]).toEqual([404, 'not_found_error', false]);
    expect(error.message).toBe(
      '404 model_not_found: The model `non-existent` does not exist or you do not have access to it.',
    );
  });

  it('maps the Groq 400 tool-use-failed body (extra failed_generation)', () => {
    const error = mapUpstreamError({
      status: 400,
      bodyText: fixture('groq/error.tool-use-failed.400.json'),
      provider: 'tpx',
    });
    expect([error.status, error.body.error.type]).toEqual([400, 'invalid_request_error']);
    expect(error.message).toMatch(/^400 tool_use_failed: Tool call validation failed: /);
  });

  it('maps the OpenRouter 429 body with a numeric code and metadata.raw', () => {
    const error = mapUpstreamError({
      status: 429,
      bodyText: fixture('openrouter/error.429-upstream-rate-limit.json'),
      headers: { 'retry-after': '3' },
      provider: 'tpx',
    });
    expect([error.status, error.body.error.type, error.retryable, error.retryAfterMs]).toEqual([
      429,
      'rate_limit_error',
      true,
      3000,
    ]);
    expect(error.message).toBe(
      '429 Too Many Requests: Provider returned error (Google: google/gemini-2.0-flash-exp:free is temporarily ' +
        'rate-limited upstream. Please retry shortly, or add your own key to accumulate your rate limits: ' +
        'https://openrouter.ai/settings/integrations)',
    );
  });

  it('maps the Qwen 400 body with extra id and request_id', () => {
    const error = mapUpstreamError({
      status: 400,
      bodyText: fixture('alibaba/error.qwen-plus.malformed-tool-arguments.json'),
      provider: 'tpx',
    });
    expect([error.status, error.body.error.type]).toEqual([400, 'invalid_request_error']);
    expect(error.message).toMatch(
      /^400 invalid_parameter_error: <400> InternalError\.Algo\.InvalidParameter/,
    );
  });

  it.each(['openai/error.unsupported-parameter.json', 'openai/error.o1-mini-system-role.400.json'])(
    'maps the OpenAI 400 body %s',
    (path) => {
      const error = mapUpstreamError({ status: 400, bodyText: fixture(path), provider: 'tpx' });
      expect([error.status, error.body.error.type, error.retryable]).toEqual([
        400,
        'invalid_request_error',
        false,
      ]);
      expect(error.message).toMatch(/^400 unsupported_(parameter|value): Unsupported /);
    },
  );
});

describe('mapUpstreamError: other body shapes', () => {
  it('keeps the type and message of a Messages-shaped error body', () => {
    const error = mapUpstreamError({
      status: 529,
      bodyText: JSON.stringify({
        type: 'error',
        error: { type: 'overloaded_error', message: 'Overloaded' },
        request_id: 'req_1',
      }),
      provider: 'anthropic',
    });
    expect(error.status).toBe(529);
    expect(error.retryable).toBe(true);
    expect(error.provider).toBe('anthropic');
    expect(error.body).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: '529 overloaded_error: Overloaded' },
      request_id: 'req_1',
    });
  });

  it('keeps an unknown Messages error type in the message but types the body by status', () => {
    const error = mapUpstreamError({
      status: 409,
      bodyText: JSON.stringify({
        type: 'error',
        error: { type: 'memory_path_conflict_error', message: 'taken' },
      }),
      provider: 'anthropic',
    });
    expect(error.body.error).toEqual({
      type: 'conflict_error',
      message: '409 memory_path_conflict_error: taken',
    });
  });

  it('explains an HTML page from a wrong base URL, quoting its title', () => {
    const html =
      '<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1>' +
      '<p>The requested URL was not found on this server.</p></body></html>';
    const error = mapUpstreamError({
      status: 404,
      bodyText: html,
      contentType: 'text/html; charset=utf-8',
      provider: 'tpx',
    });
    expect(error.message).toBe(
      'upstream answered 404 Not Found with a text/html body, not JSON — is the base URL right? (404 Not Found)',
    );
    expect([error.status, error.body.error.type]).toEqual([404, 'not_found_error']);
  });

  it('quotes the stripped text of an HTML page without a title, at most 200 characters', () => {
    const html = `<html><body><script>var x = 1;</script><h1>Gateway &amp; proxy</h1><p>${'word '.repeat(100)}</p></body></html>`;
    const error = mapUpstreamError({
      status: 502,
      bodyText: html,
      contentType: 'text/html',
      provider: 'tpx',
    });
    const quoted = /\((.*)\)$/.exec(error.message)![1]!;
    expect(quoted.startsWith('Gateway & proxy word word')).toBe(true);
    expect(quoted).not.toContain('var x');
    expect(quoted.length).toBeLessThanOrEqual(201);
    expect([error.status, error.body.error.type, error.retryable]).toEqual([502, 'api_error', true]);
  });

  it('recognises an HTML page sent without a content type', () => {
    const error = mapUpstreamError({
      status: 503,
      bodyText: '<html><title>Service Unavailable</title></html>',
      provider: 'tpx',
    });
    expect(error.message).toBe(
      'upstream answered 503 Service Unavailable with an HTML body, not JSON — is the base URL right? (Service Unavailable)',
    );
    expect([error.status, error.body.error.type]).toEqual([529, 'overloaded_error']);
  });

  it('describes a plain-text body', () => {
    const error = mapUpstreamError({
      status: 500,
      bodyText: 'Internal Server Error\n',
      contentType: 'text/plain',
      provider: 'tpx',
    });
    expect(error.message).toBe(
      'upstream answered 500 Internal Server Error with a text/plain body, not JSON (Internal Server Error)',
    );
  });

  it('describes a truncated JSON body as invalid JSON', () => {
    const error = mapUpstreamError({
      status: 500,
      bodyText: '{"error":{"message":"bro',
      contentType: 'application/json',
      provider: 'tpx',
    });
    expect(error.message).toBe(
      'upstream answered 500 Internal Server Error with an application/json body that is not valid JSON ({"error":{"message":"bro)',
    );
  });

  it('describes an empty body', () => {
    const error = mapUpstreamError({ status: 401, bodyText: '  ', provider: 'tpx' });
    expect(error.message).toBe('upstream answered 401 Unauthorized with an empty body');
    expect(error.body.error.type).toBe('authentication_error');
  });

  it('reads {"error": "text"} and FastAPI {"detail": [...]} bodies', () => {
    const plain = mapUpstreamError({
      status: 400,
      bodyText: '{"error":"model is required"}',
      provider: 'tpx',
    });
    expect(plain.message).toBe('400 Bad Request: model is required');
    const fastApi = mapUpstreamError({
      status: 422,
      bodyText: JSON.stringify({
        detail: [{ loc: ['body', 'messages'], msg: 'field required', type: 'missing' }],
      }),
      provider: 'tpx',
    });
    expect(fastApi.message).toBe('422 Unprocessable Content: body.messages: field required');
    expect(fastApi.status).toBe(400);
  });

  it('quotes an unrecognised JSON body', () => {
    const error = mapUpstreamError({ status: 500, bodyText: '{"oops":true}', provider: 'tpx' });
    expect(error.message).toBe('500 Internal Server Error: {"oops":true}');
  });
});

describe('mapStreamErrorObject', () => {
  it('maps the OpenRouter in-chunk error (quirk 17) by its numeric code', () => {
    const error = mapStreamErrorObject({ error: { code: 400, message: 'Token limit reached' } }, 'tpx');
    expect(error.code).toBe('MODEL_EHTTP');
    expect(error.body.error).toEqual({
      type: 'invalid_request_error',
      message: 'upstream stream error 400: Token limit reached',
    });
  });

  it('maps the Groq event: error payload (quirk 18) by its status_code', () => {
    const payload = JSON.parse(
      fixture('groq/gpt-oss-120b.tool-use-failed.stream.sse')
        .split('event: error\ndata: ')[1]!
        .split('\n')[0]!,
    ) as unknown;
    const error = mapStreamErrorObject(payload, 'tpx');
    expect(error.body.error.type).toBe('invalid_request_error');
    expect(error.message).toMatch(/^upstream stream error 400 tool_use_failed: Tool call validation failed/);
  });

  it.each([
    [{ message: 'Server overloaded, try later' }, 'overloaded_error'],
    [{ message: 'Rate limited', code: 429 }, 'rate_limit_error'],
    [{ message: 'unavailable', status_code: 503 }, 'overloaded_error'],
    [{ message: 'x', code: 'server_is_overloaded' }, 'overloaded_error'],
    [{ message: 'Internal error', code: 500 }, 'api_error'],
    [{ message: 'bad key', status: 401 }, 'authentication_error'],
    [{ message: 'something broke' }, 'api_error'],
    [{ message: 'something broke', type: 'server_error' }, 'api_error'],
    [{ message: 'bad', type: 'invalid_request_error' }, 'invalid_request_error'],
  ])('maps %j to %s', (error, type) => {
    expect(mapStreamErrorObject(error, 'tpx').body.error.type).toBe(type);
  });

  it('accepts a bare string, a missing message and odd values without throwing', () => {
    expect(mapStreamErrorObject('boom', 'tpx').message).toBe('upstream stream error: boom');
    expect(mapStreamErrorObject({ code: 'x' }, 'tpx').message).toBe('upstream stream error x: {"code":"x"}');
    for (const value of [null, 42, [], { error: [] }, { error: 'text' }]) {
      const error = mapStreamErrorObject(value, 'tpx');
      expect(isTransportError(error)).toBe(true);
      expect(error.body.error.type).toBe('api_error');
    }
  });
});

describe('a stated rate limit stays a rate limit, whatever the message says', () => {
  const MESSAGES = [
    'Rate limit reached for gpt-4o-mini on tokens per min (TPM): Limit 200000, Used 199000',
    'The server is overloaded, please slow down',
    'Your prompt is too long for the context window',
    "This model's maximum context length is 8192 tokens",
    'Request too large: reduce the context length or max_tokens',
  ];
  const BODIES: readonly (readonly [string, (message: string) => string])[] = [
    [
      'OpenAI type requests',
      (message) => JSON.stringify({ error: { message, type: 'requests', code: 'rate_limit_exceeded' } }),
    ],
    [
      'OpenAI type tokens',
      (message) => JSON.stringify({ error: { message, type: 'tokens', code: 'rate_limit_exceeded' } }),
    ],
    [
      'OpenAI type rate_limit_exceeded',
      (message) => JSON.stringify({ error: { message, type: 'rate_limit_exceeded', code: null } }),
    ],
    ['OpenRouter numeric code', (message) => JSON.stringify({ error: { message, code: 429 } })],
    ['a bare error string', (message) => JSON.stringify({ error: message })],
    [
      'Anthropic rate_limit_error',
      (message) => JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message } }),
    ],
  ];

  for (const [shape, body] of BODIES) {
    it.each(MESSAGES)(`answers a 429 with an ${shape} body as 429 rate_limit_error: %s`, (message) => {
      const error = mapUpstreamError({
        status: 429,
        bodyText: body(message),
        contentType: 'application/json',
        provider: 'tpx',
      });
      expect([error.code, error.status, error.body.error.type, error.retryable]).toEqual([
        'MODEL_EHTTP',
        429,
        'rate_limit_error',
        true,
      ]);
    });
  }

  it('still reads an explicit insufficient_quota on a 429 as billing_error', () => {
    const error = mapUpstreamError({
      status: 429,
      bodyText: JSON.stringify({ error: { message: 'rate limit', type: 'insufficient_quota' } }),
      provider: 'tpx',
    });
    expect([error.status, error.body.error.type]).toEqual([402, 'billing_error']);
  });

  it.each([
    [{ message: 'Server overloaded, try later', status_code: 429 }],
    [{ message: 'overloaded', type: 'rate_limit_error' }],
    [{ message: 'please slow down', code: 'rate_limit_exceeded', type: 'tokens' }],
    [{ message: 'context length exceeded', code: 429 }],
    [{ error: { message: 'The server is overloaded', type: 'requests', code: 'rate_limit_exceeded' } }],
  ])('maps the stream error %j to 429 rate_limit_error', (payload) => {
    const error = mapStreamErrorObject(payload, 'tpx');
    expect([error.status, error.body.error.type, error.retryable]).toEqual([429, 'rate_limit_error', true]);
  });

  it('still reads overload from the message when the stream error states no status or type', () => {
    const error = mapStreamErrorObject({ message: 'Server overloaded, try later' }, 'tpx');
    expect([error.status, error.body.error.type]).toEqual([529, 'overloaded_error']);
  });
});

describe('mapUpstreamError: body and header edge cases', () => {
  it('ignores an empty request id header and a request id in the body that is not a string', () => {
    const error = mapUpstreamError({
      status: 500,
      bodyText: JSON.stringify({ error: { message: 'boom' }, request_id: 12345 }),
      headers: { 'request-id': '' },
      provider: 'tpx',
    });
    expect(error.requestId).toBeUndefined();
    expect(error.body).toStrictEqual({ type: 'error', error: { type: 'api_error', message: error.message } });
    const fromBody = mapUpstreamError({
      status: 500,
      bodyText: JSON.stringify({ error: { message: 'boom' }, request_id: 12345 }),
      provider: 'tpx',
    });
    expect(fromBody.requestId).toBeUndefined();
  });

  it('reads insufficient_quota as billing only on a 429', () => {
    const error = mapUpstreamError({
      status: 400,
      bodyText: openAiBody('quota', 'insufficient_quota'),
      provider: 'tpx',
    });
    expect([error.status, error.body.error.type, error.retryable]).toStrictEqual([
      400,
      'invalid_request_error',
      false,
    ]);
  });

  it('reads a JSON body after leading whitespace, and a JSON array as JSON', () => {
    const padded = mapUpstreamError({
      status: 400,
      bodyText: `\n  ${openAiBody('bad field')}`,
      provider: 'tpx',
    });
    expect(padded.message).toBe('400 invalid_request_error: bad field');
    const list = mapUpstreamError({ status: 400, bodyText: '["bad", "field"]', provider: 'tpx' });
    expect(list.message).toBe('400 Bad Request: ["bad", "field"]');
  });

  it('reads a body that does not start like a JSON object or array as text, though it parses as JSON', () => {
    const number = mapUpstreamError({
      status: 500,
      bodyText: '12345',
      contentType: 'text/plain',
      provider: 'tpx',
    });
    expect(number.message).toBe(
      'upstream answered 500 Internal Server Error with a text/plain body, not JSON (12345)',
    );
  });
});
