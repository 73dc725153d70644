import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { TransportError } from '../errors.js';
import type { Message, MessagesRequest, MessageStreamEvent } from '../protocol/messages.js';
import type { CountTokensRequest, ExchangeOptions, ModelTransport } from '../transport/types.js';
import { CANCELLATION, Cancellation } from '../providers/cancellation.js';
import { createMessagesHandler, type MessagesHandlerOptions } from './messages-handler.js';
import type { ExchangeOutcome, Telemetry } from '../telemetry/exchange-telemetry.js';
import type { InboundRequest, JsonResponse, ProxyResponse, SseResponse } from './types.js';

const MESSAGE: Message = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-test',
  content: [{ type: 'text', text: 'Hello' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 3 },
};

const EVENTS: MessageStreamEvent[] = [
  {
    type: 'message_start',
    message: { ...MESSAGE, content: [], stop_reason: null, usage: { input_tokens: 12, output_tokens: 1 } },
  },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } },
  { type: 'content_block_stop', index: 0 },
  {
    type: 'message_delta',
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { output_tokens: 3 },
  },
  { type: 'message_stop' },
];

const REQUEST_BODY = JSON.stringify({
  model: 'claude-test',
  max_tokens: 64,
  messages: [{ role: 'user', content: 'Hi' }],
});

interface Call {
  kind: 'send' | 'stream' | 'countTokens' | 'listModels';
  request?: unknown;
  options: ExchangeOptions;
}

/** A transport whose behaviour each test sets, recording every call. */
function fakeTransport(overrides: Partial<ModelTransport> = {}): {
  transport: ModelTransport;
  calls: Call[];
} {
  const calls: Call[] = [];
  const transport: ModelTransport = {
    provider: 'anthropic',
    selection: { provider: 'anthropic', reason: 'ANTHROPIC_API_KEY is set' },
    async send(request: MessagesRequest, options: ExchangeOptions = {}) {
      calls.push({ kind: 'send', request, options });
      options.onResponse?.({ status: 200, headers: { 'request-id': 'req_upstream' }, attempts: 1 });
      return MESSAGE;
    },
    async *stream(request: MessagesRequest, options: ExchangeOptions = {}) {
      calls.push({ kind: 'stream', request, options });
      options.onResponse?.({ status: 200, headers: {}, attempts: 1 });
      yield* EVENTS;
    },
    async countTokens(request: CountTokensRequest, options: ExchangeOptions = {}) {
      calls.push({ kind: 'countTokens', request, options });
      return { input_tokens: 42 };
    },
    async listModels(options: ExchangeOptions = {}) {
      calls.push({ kind: 'listModels', options });
      return { data: [], has_more: false, first_id: null, last_id: null };
    },
    async close() {},
    ...overrides,
  };
  return { transport, calls };
}

function inbound(
  method: string,
  url: string,
  options: { headers?: Record<string, string | string[]>; body?: string; signal?: AbortSignal } = {},
): InboundRequest {
  const bytes = Buffer.from(options.body ?? '');
  return {
    method,
    url,
    headers: options.headers ?? {},
    readBody: () => Promise.resolve(bytes),
    signal: options.signal ?? new AbortController().signal,
  };
}

function captureLogs(): { logger: pino.Logger; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  const logger = pino({ level: 'debug' }, destination);
  return {
    logger,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

function handlerFor(transport: ModelTransport, options: Partial<MessagesHandlerOptions> = {}) {
  return createMessagesHandler({
    transport,
    logger: pino({ enabled: false }),
    generateRequestId: () => 'req_own',
    ...options,
  });
}

function asJson(response: ProxyResponse): JsonResponse {
  expect(response.kind).toBe('json');
  return response as JsonResponse;
}

async function collect(response: ProxyResponse): Promise<string[]> {
  expect(response.kind).toBe('sse');
  const frames: string[] = [];
  for await (const frame of (response as SseResponse).frames) frames.push(frame);
  return frames;
}

describe('POST /v1/messages', () => {
  it('answers a non-streaming request with the message as JSON and the upstream request-id', async () => {
    const { transport } = fakeTransport();
    const response = asJson(
      await handlerFor(transport)(inbound('POST', '/v1/messages', { body: REQUEST_BODY })),
    );
    expect(response.status).toBe(200);
    expect(response.headers).toEqual({ 'content-type': 'application/json', 'request-id': 'req_upstream' });
    expect(JSON.parse(response.body)).toEqual(MESSAGE);
  });

  it('passes the client bytes, the query string and only anthropic-version and anthropic-beta to the transport', async () => {
    const { transport, calls } = fakeTransport();
    await handlerFor(transport)(
      inbound('POST', '/v1/messages?beta=true', {
        body: REQUEST_BODY,
        headers: {
          'anthropic-version': '2026-10-21',
          'anthropic-beta': 'tools-2099',
          'x-api-key': 'sk-client-secret',
          authorization: 'Bearer sk-client-secret',
          cookie: 'session=1',
        },
      }),
    );
    const call = calls[0]!;
    expect(call.options.headers).toEqual({
      'anthropic-version': '2026-10-21',
      'anthropic-beta': 'tools-2099',
    });
    expect(call.options.query).toBe('beta=true');
    expect(Buffer.from(call.options.rawBody as Uint8Array).toString('utf8')).toBe(REQUEST_BODY);
    expect(call.options.signal).toBeInstanceOf(AbortSignal);
  });

  it('answers invalid JSON with a 400 invalid_request_error naming the problem', async () => {
    const { transport, calls } = fakeTransport();
    const response = asJson(
      await handlerFor(transport)(inbound('POST', '/v1/messages', { body: '{"model": ' })),
    );
    expect(response.status).toBe(400);
    const body = JSON.parse(response.body);
    expect(body.type).toBe('error');
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toMatch(/^the request body is not valid JSON: /);
    expect(body.request_id).toBe('req_own');
    expect(calls).toEqual([]);
  });

  it('answers an empty body and a JSON array with 400', async () => {
    const { transport } = fakeTransport();
    const handle = handlerFor(transport);
    const empty = asJson(await handle(inbound('POST', '/v1/messages', { body: '' })));
    const array = asJson(await handle(inbound('POST', '/v1/messages', { body: '[]' })));
    expect([empty.status, array.status]).toEqual([400, 400]);
    expect(JSON.parse(empty.body).error.message).toContain('empty');
    expect(JSON.parse(array.body).error.message).toContain('an array');
  });

  it('answers a transport error with its status, its Messages body and the retry headers', async () => {
    const error = new TransportError('MODEL_EHTTP', 'rate limited upstream', {
      status: 429,
      type: 'rate_limit_error',
      headers: { 'retry-after': '7', 'anthropic-ratelimit-requests-remaining': '0', 'x-internal': 'no' },
    });
    const { transport } = fakeTransport({ send: () => Promise.reject(error) });
    const response = asJson(
      await handlerFor(transport)(inbound('POST', '/v1/messages', { body: REQUEST_BODY })),
    );
    expect(response.status).toBe(429);
    expect(response.headers).toEqual({
      'content-type': 'application/json',
      'request-id': 'req_own',
      'retry-after': '7',
      'anthropic-ratelimit-requests-remaining': '0',
    });
    expect(JSON.parse(response.body)).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'rate limited upstream' },
      request_id: 'req_own',
    });
  });

  it('answers an unexpected exception as a 500 api_error without its internals', async () => {
    const { transport } = fakeTransport({ send: () => Promise.reject(new Error('secret internal detail')) });
    const response = asJson(
      await handlerFor(transport)(inbound('POST', '/v1/messages', { body: REQUEST_BODY })),
    );
    expect(response.status).toBe(500);
    expect(JSON.parse(response.body).error.type).toBe('api_error');
    expect(response.body).not.toContain('secret internal detail');
  });
});

describe('POST /v1/messages with "stream": true', () => {
  const STREAM_BODY = JSON.stringify({ ...JSON.parse(REQUEST_BODY), stream: true });

  it('streams every event as an event line and a data line, with no [DONE]', async () => {
    const { transport } = fakeTransport();
    const response = await handlerFor(transport)(inbound('POST', '/v1/messages', { body: STREAM_BODY }));
    expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-cache');
    expect(response.headers['request-id']).toBe('req_own');
    const frames = await collect(response);
    expect(frames).toEqual(EVENTS.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`));
    expect(frames.join('')).not.toContain('[DONE]');
  });

  it('answers a failure before the first event with an HTTP error, not a stream', async () => {
    const { transport } = fakeTransport({
      // eslint-disable-next-line require-yield
      async *stream() {
        throw new TransportError('MODEL_ETRANSPORT', 'connection refused', { provider: 'tpx' });
      },
    });
    const response = asJson(
      await handlerFor(transport)(inbound('POST', '/v1/messages', { body: STREAM_BODY })),
    );
    expect(response.status).toBe(502);
    expect(JSON.parse(response.body).error).toEqual({ type: 'api_error', message: 'connection refused' });
  });

  it('ends with an error frame when the stream fails after its first event', async () => {
    const { transport } = fakeTransport({
      async *stream() {
        yield EVENTS[0]!;
        throw new TransportError('MODEL_EHTTP', 'overloaded', { status: 529, type: 'overloaded_error' });
      },
    });
    const frames = await collect(
      await handlerFor(transport)(inbound('POST', '/v1/messages', { body: STREAM_BODY })),
    );
    expect(frames).toHaveLength(2);
    expect(frames[1]).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"overloaded"},"request_id":"req_own"}\n\n',
    );
  });

  it('stops the upstream stream when the consumer stops early', async () => {
    let finished = false;
    const { transport } = fakeTransport({
      async *stream() {
        try {
          yield* EVENTS;
        } finally {
          finished = true;
        }
      },
    });
    const response = (await handlerFor(transport)(
      inbound('POST', '/v1/messages', { body: STREAM_BODY }),
    )) as SseResponse;
    for await (const frame of response.frames) {
      expect(frame).toContain('message_start');
      break;
    }
    expect(finished).toBe(true);
  });

  it('writes no error frame once the client has gone', async () => {
    const controller = new AbortController();
    const { transport } = fakeTransport({
      async *stream() {
        yield EVENTS[0]!;
        controller.abort();
        throw new TransportError('MODEL_EABORTED', 'cancelled');
      },
    });
    const response = await handlerFor(transport)(
      inbound('POST', '/v1/messages', { body: STREAM_BODY, signal: controller.signal }),
    );
    const frames = await collect(response);
    expect(frames).toHaveLength(1);
  });
});

describe('routing and authentication', () => {
  it('answers an unknown path with 404 not_found_error and a wrong method with 405 and allow', async () => {
    const { transport } = fakeTransport();
    const handle = handlerFor(transport);
    const missing = asJson(await handle(inbound('GET', '/v1/nothing')));
    const wrong = asJson(await handle(inbound('GET', '/v1/messages')));
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body).error.type).toBe('not_found_error');
    expect(wrong.status).toBe(405);
    expect(wrong.headers['allow']).toBe('POST');
  });

  it('requires the proxy token in x-api-key or as a bearer token when one is set', async () => {
    const { transport, calls } = fakeTransport();
    const handle = handlerFor(transport, { proxyToken: 'proxy-token-1' });
    const denied = asJson(await handle(inbound('POST', '/v1/messages', { body: REQUEST_BODY })));
    const wrong = asJson(
      await handle(
        inbound('POST', '/v1/messages', { body: REQUEST_BODY, headers: { 'x-api-key': 'proxy-token-2' } }),
      ),
    );
    const viaKey = asJson(
      await handle(
        inbound('POST', '/v1/messages', { body: REQUEST_BODY, headers: { 'x-api-key': 'proxy-token-1' } }),
      ),
    );
    const viaBearer = asJson(
      await handle(
        inbound('POST', '/v1/messages', {
          body: REQUEST_BODY,
          headers: { authorization: 'Bearer proxy-token-1' },
        }),
      ),
    );
    expect([denied.status, wrong.status, viaKey.status, viaBearer.status]).toEqual([401, 401, 200, 200]);
    expect(JSON.parse(denied.body).error.type).toBe('authentication_error');
    expect(calls).toHaveLength(2);
  });

  it('answers /healthz with the provider and its reason, without the proxy token', async () => {
    const { transport } = fakeTransport();
    const response = asJson(
      await handlerFor(transport, { proxyToken: 'proxy-token-1' })(inbound('GET', '/healthz')),
    );
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({
      ok: true,
      provider: 'anthropic',
      reason: 'ANTHROPIC_API_KEY is set',
    });
  });
});

describe('count_tokens and models', () => {
  it('answers count_tokens from the transport, with the client bytes and query passed on', async () => {
    const { transport, calls } = fakeTransport();
    const body = JSON.stringify({ model: 'claude-test', messages: [{ role: 'user', content: 'Hi' }] });
    const response = asJson(
      await handlerFor(transport)(inbound('POST', '/v1/messages/count_tokens?beta=true', { body })),
    );
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ input_tokens: 42 });
    expect(calls[0]!.kind).toBe('countTokens');
    expect(calls[0]!.options.query).toBe('beta=true');
    expect(Buffer.from(calls[0]!.options.rawBody as Uint8Array).toString('utf8')).toBe(body);
  });

  it('answers 404 for count_tokens and models when the transport cannot do them', async () => {
    const { transport } = fakeTransport();
    const { countTokens: _count, listModels: _list, ...bare } = transport;
    const handle = handlerFor(bare);
    const count = asJson(await handle(inbound('POST', '/v1/messages/count_tokens', { body: REQUEST_BODY })));
    const models = asJson(await handle(inbound('GET', '/v1/models')));
    expect([count.status, models.status]).toEqual([404, 404]);
  });

  it('answers GET /v1/models with the transport list and passes the query on', async () => {
    const { transport, calls } = fakeTransport();
    const response = asJson(await handlerFor(transport)(inbound('GET', '/v1/models?limit=5')));
    expect(JSON.parse(response.body)).toEqual({ data: [], has_more: false, first_id: null, last_id: null });
    expect(calls[0]!.options.query).toBe('limit=5');
  });
});

describe('exchange logs', () => {
  it('writes one line per exchange with request id, model, status, attempts and usage, and no body', async () => {
    const { transport } = fakeTransport();
    const { logger, lines } = captureLogs();
    await handlerFor(transport, { logger })(
      inbound('POST', '/v1/messages', { body: REQUEST_BODY, headers: { 'x-api-key': 'sk-client-secret' } }),
    );
    const logged = lines();
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      msg: 'exchange',
      requestId: 'req_upstream',
      method: 'POST',
      path: '/v1/messages',
      provider: 'anthropic',
      model: 'claude-test',
      stream: false,
      status: 200,
      attempts: 1,
      usage: { input_tokens: 12, output_tokens: 3 },
    });
    expect(typeof logged[0]!['durationMs']).toBe('number');
    const text = JSON.stringify(logged);
    expect(text).not.toContain('sk-client-secret');
    expect(text).not.toContain('Hello');
    expect(text).not.toContain('"Hi"');
  });

  it('logs the usage of a stream once it ends', async () => {
    const { transport } = fakeTransport();
    const { logger, lines } = captureLogs();
    const response = await handlerFor(transport, { logger })(
      inbound('POST', '/v1/messages', {
        body: JSON.stringify({ ...JSON.parse(REQUEST_BODY), stream: true }),
      }),
    );
    expect(lines()).toHaveLength(0);
    await collect(response);
    expect(lines()[0]).toMatchObject({
      stream: true,
      status: 200,
      usage: { input_tokens: 12, output_tokens: 3 },
    });
  });

  it('logs bodies only with logBodies', async () => {
    const { transport } = fakeTransport();
    const { logger, lines } = captureLogs();
    await handlerFor(transport, { logger, logBodies: true })(
      inbound('POST', '/v1/messages', { body: REQUEST_BODY }),
    );
    expect(lines()[0]).toMatchObject({ requestBody: REQUEST_BODY, responseBody: JSON.stringify(MESSAGE) });
  });
});

/** A telemetry source that records what each exchange reported. */
function recordingTelemetry() {
  const started: { method: string; path: string; headers: unknown }[] = [];
  const outcomes: ExchangeOutcome[] = [];
  let streamsOpened = 0;
  const observer = { onAttemptStart: () => undefined };
  const telemetry: Telemetry = {
    startExchange(start) {
      started.push(start);
      return {
        observer,
        streamOpened: () => {
          streamsOpened += 1;
        },
        end: (outcome) => {
          outcomes.push(outcome);
        },
      };
    },
  };
  return { telemetry, started, outcomes, observer, streamsOpened: () => streamsOpened };
}

describe('routes a client checks before it starts', () => {
  it('answers GET and HEAD / and /api/hello with an empty 200 logged at debug level, without the token', async () => {
    const { transport, calls } = fakeTransport();
    const { logger, lines } = captureLogs();
    const handle = handlerFor(transport, { logger, proxyToken: 'proxy-token-1' });
    for (const [method, url] of [
      ['GET', '/'],
      ['HEAD', '/'],
      ['GET', '/api/hello'],
      ['POST', '/api/hello'],
    ] as const) {
      const response = asJson(await handle(inbound(method, url)));
      expect(response).toStrictEqual({
        kind: 'json',
        status: 200,
        headers: { 'content-type': 'application/json', 'request-id': 'req_own' },
        body: '{}',
      });
    }
    expect(lines().map((line) => [line['level'], line['status'], line['path']])).toStrictEqual([
      [20, 200, '/'],
      [20, 200, '/'],
      [20, 200, '/api/hello'],
      [20, 200, '/api/hello'],
    ]);
    expect(calls).toStrictEqual([]);
  });

  it('answers HEAD /healthz like GET, at debug level, and POST / needs the token', async () => {
    const { transport } = fakeTransport();
    const { logger, lines } = captureLogs();
    const handle = handlerFor(transport, { logger, proxyToken: 'proxy-token-1' });
    const head = asJson(await handle(inbound('HEAD', '/healthz')));
    expect(head.status).toBe(200);
    expect(JSON.parse(head.body)).toStrictEqual({
      ok: true,
      provider: 'anthropic',
      reason: 'ANTHROPIC_API_KEY is set',
    });
    expect(lines()[0]!['level']).toBe(20);
    expect(asJson(await handle(inbound('POST', '/'))).status).toBe(401);
    expect(asJson(await handle(inbound('GET', '/other'))).status).toBe(401);
  });
});

describe('405 and 404 answers', () => {
  it.each([
    ['GET', '/v1/messages', 'POST'],
    ['PUT', '/v1/messages/count_tokens', 'POST'],
    ['POST', '/v1/models', 'GET'],
    ['POST', '/healthz', 'GET'],
    ['DELETE', '/healthz', 'GET'],
  ])('answers %s %s with 405 naming the method, and allow: %s', async (method, path, allowed) => {
    const { transport, calls } = fakeTransport();
    const response = asJson(await handlerFor(transport)(inbound(method, path)));
    expect(response.status).toBe(405);
    expect(response.headers).toStrictEqual({
      'content-type': 'application/json',
      'request-id': 'req_own',
      allow: allowed,
    });
    expect(JSON.parse(response.body)).toStrictEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: `${path} accepts ${allowed}, not ${method}` },
      request_id: 'req_own',
    });
    expect(calls).toStrictEqual([]);
  });

  it('answers an unknown path with 404 naming it, with no allow header', async () => {
    const { transport } = fakeTransport();
    const response = asJson(await handlerFor(transport)(inbound('DELETE', '/v1/files?x=1')));
    expect(response.status).toBe(404);
    expect(response.headers).toStrictEqual({ 'content-type': 'application/json', 'request-id': 'req_own' });
    expect(JSON.parse(response.body).error).toStrictEqual({
      type: 'not_found_error',
      message: 'no such endpoint: DELETE /v1/files',
    });
  });

  it('answers 404 with the exact reasons when the transport cannot count tokens or list models', async () => {
    const { transport } = fakeTransport();
    const { countTokens: _count, listModels: _list, ...bare } = transport;
    const handle = handlerFor(bare);
    const count = asJson(await handle(inbound('POST', '/v1/messages/count_tokens', { body: REQUEST_BODY })));
    const models = asJson(await handle(inbound('GET', '/v1/models')));
    expect(JSON.parse(count.body).error).toStrictEqual({
      type: 'not_found_error',
      message: 'this transport cannot count tokens: POST /v1/messages/count_tokens is not available',
    });
    expect(JSON.parse(models.body).error).toStrictEqual({
      type: 'not_found_error',
      message: 'this transport cannot list models',
    });
  });

  it('reads a count_tokens body before saying the transport cannot count', async () => {
    const { transport } = fakeTransport();
    const { countTokens: _count, ...bare } = transport;
    const response = asJson(
      await handlerFor(bare)(inbound('POST', '/v1/messages/count_tokens', { body: '[' })),
    );
    expect(response.status).toBe(400);
  });
});

describe('the body of a request', () => {
  it('names what the body is when it is not an object', async () => {
    const { transport } = fakeTransport();
    const handle = handlerFor(transport);
    const messages: string[] = [];
    for (const body of ['[]', '"text"', '12', 'null', 'true']) {
      const response = asJson(await handle(inbound('POST', '/v1/messages', { body })));
      expect(response.status).toBe(400);
      messages.push(JSON.parse(response.body).error.message as string);
    }
    expect(messages).toStrictEqual([
      'the request body must be a JSON object, got an array',
      'the request body must be a JSON object, got string',
      'the request body must be a JSON object, got number',
      'the request body must be a JSON object, got object',
      'the request body must be a JSON object, got boolean',
    ]);
    const empty = asJson(await handle(inbound('POST', '/v1/messages', { body: '' })));
    expect(JSON.parse(empty.body).error.message).toBe('the request body is empty: expected a JSON object');
  });

  it('refuses invalid UTF-8 and nesting too deep with 400 before the transport sees them', async () => {
    const { transport, calls } = fakeTransport();
    const handle = handlerFor(transport);
    const bytes = Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]);
    const invalid = asJson(
      await handle({ ...inbound('POST', '/v1/messages'), readBody: () => Promise.resolve(bytes) }),
    );
    expect(JSON.parse(invalid.body).error).toStrictEqual({
      type: 'invalid_request_error',
      message: 'the request body is not valid UTF-8: send the JSON encoded as UTF-8',
    });
    const deep = asJson(
      await handle(inbound('POST', '/v1/messages', { body: '['.repeat(1000) + ']'.repeat(1000) })),
    );
    expect(JSON.parse(deep.body).error.message).toMatch(
      /^the request body nests arrays and objects more than \d+ levels deep$/,
    );
    expect(calls).toStrictEqual([]);
  });

  it('does not record a model that is not a string', async () => {
    const { transport } = fakeTransport();
    const { logger, lines } = captureLogs();
    await handlerFor(transport, { logger })(
      inbound('POST', '/v1/messages', { body: JSON.stringify({ model: 7, max_tokens: 1, messages: [] }) }),
    );
    expect(lines()[0]).not.toHaveProperty('model');
  });
});

describe('the request loop guard', () => {
  it('answers a request carrying its own instance id with 508 before anything else, naming its URL', async () => {
    const { transport, calls } = fakeTransport();
    const handle = handlerFor(transport, { instanceId: 'inst-1', ownUrl: 'http://127.0.0.1:9' });
    const looped = asJson(
      await handle(
        inbound('POST', '/v1/messages', { body: REQUEST_BODY, headers: { 'tpx-hop': 'other, inst-1' } }),
      ),
    );
    expect(looped.status).toBe(508);
    expect(looped.headers['x-should-retry']).toBe('false');
    expect(JSON.parse(looped.body).error.message).toContain('(http://127.0.0.1:9)');
    const healthz = asJson(await handle(inbound('GET', '/healthz', { headers: { 'tpx-hop': 'inst-1' } })));
    expect(healthz.status).toBe(508);
    const otherProxy = asJson(
      await handle(inbound('POST', '/v1/messages', { body: REQUEST_BODY, headers: { 'tpx-hop': 'other' } })),
    );
    expect(otherProxy.status).toBe(200);
    expect(calls).toHaveLength(1);
    const unnamed = handlerFor(transport, { instanceId: 'inst-1' });
    const answer = asJson(await unnamed(inbound('GET', '/healthz', { headers: { 'tpx-hop': 'inst-1' } })));
    expect(JSON.parse(answer.body).error.message).toContain('(this proxy)');
  });

  it('forwards every request when it has no instance id', async () => {
    const { transport } = fakeTransport();
    const response = asJson(
      await handlerFor(transport)(inbound('GET', '/healthz', { headers: { 'tpx-hop': 'undefined' } })),
    );
    expect(response.status).toBe(200);
  });
});

describe('requests from browsers', () => {
  const requestCheck = {
    hasProxyToken: false,
    listenHost: '127.0.0.1',
    allowedOrigins: ['https://app.example'],
  };
  const CORS = {
    'access-control-allow-origin': 'https://app.example',
    vary: 'origin',
    'access-control-expose-headers': 'request-id, retry-after, x-should-retry',
  };

  it('answers an allowed preflight with an empty 204 and the CORS headers, without the token', async () => {
    const { transport, calls } = fakeTransport();
    const response = asJson(
      await handlerFor(transport, { requestCheck, proxyToken: 'proxy-token-1' })(
        inbound('OPTIONS', '/v1/messages', {
          headers: {
            host: 'localhost',
            origin: 'https://app.example',
            'access-control-request-method': 'POST',
          },
        }),
      ),
    );
    expect(response).toStrictEqual({
      kind: 'json',
      status: 204,
      headers: {
        'content-type': 'application/json',
        'request-id': 'req_own',
        ...CORS,
        'access-control-allow-methods': 'GET, POST, OPTIONS',
        'access-control-max-age': '600',
      },
      body: '',
    });
    expect(calls).toStrictEqual([]);
  });

  it('adds the CORS headers to answers and to errors, and checks the body type before reading it', async () => {
    const { transport, calls } = fakeTransport();
    const handle = handlerFor(transport, { requestCheck });
    const headers = { host: 'localhost', origin: 'https://app.example', 'content-type': 'application/json' };
    const ok = asJson(await handle(inbound('POST', '/v1/messages', { body: REQUEST_BODY, headers })));
    expect(ok.headers).toStrictEqual({
      'content-type': 'application/json',
      'request-id': 'req_upstream',
      ...CORS,
    });
    const wrongMethod = asJson(await handle(inbound('GET', '/v1/messages', { headers })));
    expect(wrongMethod.headers).toStrictEqual({
      'content-type': 'application/json',
      'request-id': 'req_own',
      ...CORS,
      allow: 'POST',
    });
    const plainText = asJson(
      await handle(
        inbound('POST', '/v1/messages', {
          body: REQUEST_BODY,
          headers: { ...headers, 'content-type': 'text/plain' },
        }),
      ),
    );
    expect(plainText.status).toBe(415);
    expect(plainText.headers).toStrictEqual({
      'content-type': 'application/json',
      'request-id': 'req_own',
      ...CORS,
    });
    const refused = asJson(
      await handle(
        inbound('POST', '/v1/messages', {
          body: REQUEST_BODY,
          headers: { ...headers, origin: 'https://evil.example' },
        }),
      ),
    );
    expect(refused.status).toBe(403);
    expect(refused.headers).toStrictEqual({ 'content-type': 'application/json', 'request-id': 'req_own' });
    expect(calls).toHaveLength(1);
  });
});

describe('streams', () => {
  const STREAM_BODY = JSON.stringify({ ...JSON.parse(REQUEST_BODY), stream: true });

  it('answers a stream that ends before its first event with 502 naming the provider', async () => {
    const { transport } = fakeTransport({
      // eslint-disable-next-line require-yield
      async *stream() {
        return;
      },
    });
    const response = asJson(
      await handlerFor(transport)(inbound('POST', '/v1/messages', { body: STREAM_BODY })),
    );
    expect(response.status).toBe(502);
    expect(JSON.parse(response.body).error).toStrictEqual({
      type: 'api_error',
      message: 'the stream ended before its first event',
    });
  });

  it('starts a late stream with a ping and still delivers every event after it', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { transport } = fakeTransport({
      async *stream() {
        await gate;
        yield* EVENTS;
      },
    });
    const response = await handlerFor(transport, { pingIntervalMs: 5 })(
      inbound('POST', '/v1/messages', { body: STREAM_BODY }),
    );
    expect(response.kind).toBe('sse');
    release();
    const frames = await collect(response);
    expect(frames).toStrictEqual([
      'event: ping\ndata: {"type": "ping"}\n\n',
      ...EVENTS.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`),
    ]);
  });

  it('reports a late stream that fails before its first event as an error frame after the ping', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { transport } = fakeTransport({
      // eslint-disable-next-line require-yield
      async *stream() {
        await gate;
        throw new TransportError('MODEL_ETRANSPORT', 'connection reset');
      },
    });
    const response = await handlerFor(transport, { pingIntervalMs: 5 })(
      inbound('POST', '/v1/messages', { body: STREAM_BODY }),
    );
    release();
    expect(await collect(response)).toStrictEqual([
      'event: ping\ndata: {"type": "ping"}\n\n',
      'event: error\ndata: {"type":"error","error":{"type":"api_error","message":"connection reset"},"request_id":"req_own"}\n\n',
    ]);
  });

  it('answers a prompt stream without a ping when pings are on', async () => {
    const { transport } = fakeTransport();
    const response = await handlerFor(transport, { pingIntervalMs: 60_000 })(
      inbound('POST', '/v1/messages', { body: STREAM_BODY }),
    );
    const frames = await collect(response);
    expect(frames[0]).toMatch(/^event: message_start\n/);
  });

  it('logs a stream cut by its consumer as closed by the client, and one that failed with its error', async () => {
    const { transport } = fakeTransport();
    const { logger, lines } = captureLogs();
    const handle = handlerFor(transport, { logger });
    const response = (await handle(inbound('POST', '/v1/messages', { body: STREAM_BODY }))) as SseResponse;
    for await (const frame of response.frames) {
      expect(frame).toContain('message_start');
      break;
    }
    expect(lines()[0]).toMatchObject({ status: 200, stream: true, clientClosed: true });
    const complete = await handle(inbound('POST', '/v1/messages', { body: STREAM_BODY }));
    await collect(complete);
    expect(lines()[1]).not.toHaveProperty('clientClosed');
    const { transport: failing } = fakeTransport({
      async *stream() {
        yield EVENTS[0]!;
        throw new TransportError('MODEL_ETRANSPORT', 'cut');
      },
    });
    await collect(
      await handlerFor(failing, { logger })(inbound('POST', '/v1/messages', { body: STREAM_BODY })),
    );
    expect(lines()[2]).toMatchObject({ status: 200, error: 'MODEL_ETRANSPORT', errorMessage: 'cut' });
    expect(lines()[2]).not.toHaveProperty('clientClosed');
  });

  it('logs a stream whose client went away as closed by the client', async () => {
    const controller = new AbortController();
    const { transport } = fakeTransport({
      async *stream() {
        yield EVENTS[0]!;
        controller.abort();
        throw new TransportError('MODEL_EABORTED', 'cancelled');
      },
    });
    const { logger, lines } = captureLogs();
    await collect(
      await handlerFor(transport, { logger })(
        inbound('POST', '/v1/messages', { body: STREAM_BODY, signal: controller.signal }),
      ),
    );
    expect(lines()[0]).toMatchObject({ clientClosed: true, error: 'MODEL_EABORTED' });
  });

  it('ends the upstream stream when the consumer stops after later batches, too', async () => {
    let finished = false;
    const { transport } = fakeTransport({
      async *stream() {
        try {
          yield* EVENTS;
        } finally {
          finished = true;
        }
      },
    });
    const response = (await handlerFor(transport)(
      inbound('POST', '/v1/messages', { body: STREAM_BODY }),
    )) as SseResponse;
    let count = 0;
    for await (const _frame of response.frames) {
      count += 1;
      if (count === 3) break;
    }
    expect(finished).toBe(true);
  });
});

describe('telemetry of an exchange', () => {
  it('starts with the method, path without query and headers, hands the observer to the transport, and ends once with the outcome', async () => {
    const { transport, calls } = fakeTransport();
    const { telemetry, started, outcomes, observer } = recordingTelemetry();
    const handle = handlerFor(transport, { telemetry });
    await handle(
      inbound('POST', '/v1/messages?beta=true', { body: REQUEST_BODY, headers: { traceparent: 't' } }),
    );
    expect(started).toStrictEqual([{ method: 'POST', path: '/v1/messages', headers: { traceparent: 't' } }]);
    expect(calls[0]!.options.observer).toBe(observer);
    expect(outcomes).toHaveLength(1);
    const outcome = outcomes[0]!;
    expect(outcome.stopReason).toBe('end_turn');
    expect(outcome.timeToFirstByteMs).toBeGreaterThanOrEqual(0);
    expect(outcome.record).toMatchObject({
      requestId: 'req_upstream',
      status: 200,
      model: 'claude-test',
      stream: false,
    });
  });

  it('reports a stream opened, its stop reason from message_delta, and one end', async () => {
    const { transport } = fakeTransport();
    const recording = recordingTelemetry();
    const response = await handlerFor(transport, { telemetry: recording.telemetry })(
      inbound('POST', '/v1/messages', {
        body: JSON.stringify({ ...JSON.parse(REQUEST_BODY), stream: true }),
      }),
    );
    expect(recording.streamsOpened()).toBe(1);
    expect(recording.outcomes).toHaveLength(0);
    await collect(response);
    expect(recording.outcomes).toHaveLength(1);
    expect(recording.outcomes[0]!.stopReason).toBe('end_turn');
    expect(recording.outcomes[0]!.record.usage).toStrictEqual({ input_tokens: 12, output_tokens: 3 });
  });

  it('reports no stop reason for a message without one, and a failure with its status', async () => {
    const { transport } = fakeTransport({
      send: () => Promise.resolve({ ...MESSAGE, stop_reason: null }),
    });
    const recording = recordingTelemetry();
    await handlerFor(transport, { telemetry: recording.telemetry })(
      inbound('POST', '/v1/messages', { body: REQUEST_BODY }),
    );
    expect(recording.outcomes[0]).not.toHaveProperty('stopReason');
    const failing = fakeTransport({
      send: () => Promise.reject(new TransportError('MODEL_ETIMEOUT', 'slow')),
    });
    await handlerFor(failing.transport, { telemetry: recording.telemetry })(
      inbound('POST', '/v1/messages', { body: REQUEST_BODY }),
    );
    expect(recording.outcomes[1]!.record).toMatchObject({
      status: 504,
      error: 'MODEL_ETIMEOUT',
      errorMessage: 'slow',
    });
  });
});

describe('the options handed to the transport', () => {
  it('follow the cancellation when the request has one, else its signal, and carry no empty query', async () => {
    const { transport, calls } = fakeTransport();
    const cancellation = new Cancellation();
    await handlerFor(transport)({ ...inbound('POST', '/v1/messages', { body: REQUEST_BODY }), cancellation });
    expect(calls[0]!.options).not.toHaveProperty('signal');
    expect(calls[0]!.options).not.toHaveProperty('query');
    expect((calls[0]!.options as Record<symbol, unknown>)[CANCELLATION]).toBe(cancellation);
    await handlerFor(transport)(inbound('GET', '/v1/models'));
    expect(calls[1]!.options).not.toHaveProperty('rawBody');
    expect(calls[1]!.options.signal).toBeInstanceOf(AbortSignal);
    expect(calls[1]!.options.headers).toStrictEqual({});
  });

  it('pass a repeated anthropic-beta header on as the list it is', async () => {
    const { transport, calls } = fakeTransport();
    await handlerFor(transport)(
      inbound('POST', '/v1/messages', {
        body: REQUEST_BODY,
        headers: { 'anthropic-beta': ['a', 'b'] },
      }),
    );
    expect(calls[0]!.options.headers).toStrictEqual({ 'anthropic-beta': ['a', 'b'] });
  });
});

describe('exchange log lines', () => {
  it('carry the upstream model, its max_tokens and every usage field it reported', async () => {
    const { transport } = fakeTransport({
      async send(_request, options = {}) {
        options.onResponse?.({
          status: 200,
          headers: {},
          attempts: 2,
          upstreamModel: 'qwen3',
          upstreamMaxTokens: 4096,
        });
        return {
          ...MESSAGE,
          usage: {
            input_tokens: 5,
            output_tokens: 6,
            cache_creation_input_tokens: 7,
            cache_read_input_tokens: 8,
          },
        };
      },
    });
    const { logger, lines } = captureLogs();
    await handlerFor(transport, { logger })(inbound('POST', '/v1/messages', { body: REQUEST_BODY }));
    const line = lines()[0]!;
    expect(line).toMatchObject({
      level: 30,
      requestId: 'req_own',
      attempts: 2,
      upstreamModel: 'qwen3',
      upstreamMaxTokens: 4096,
      usage: {
        input_tokens: 5,
        output_tokens: 6,
        cache_creation_input_tokens: 7,
        cache_read_input_tokens: 8,
      },
    });
    expect(Object.keys(line['usage'] as object)).toHaveLength(4);
    expect(line['durationMs']).toBe(Math.round((line['durationMs'] as number) * 10) / 10);
  });

  it('keep no usage field that is not a number', async () => {
    const { transport } = fakeTransport({
      send: () =>
        Promise.resolve({
          ...MESSAGE,
          usage: { input_tokens: '5', output_tokens: null } as unknown as Message['usage'],
        }),
    });
    const { logger, lines } = captureLogs();
    await handlerFor(transport, { logger })(inbound('POST', '/v1/messages', { body: REQUEST_BODY }));
    expect(lines()[0]!['usage']).toStrictEqual({});
    const nullUsage = fakeTransport({
      send: () => Promise.resolve({ ...MESSAGE, usage: null as unknown as Message['usage'] }),
    });
    await handlerFor(nullUsage.transport, { logger })(
      inbound('POST', '/v1/messages', { body: REQUEST_BODY }),
    );
    expect(lines()[1]!['usage']).toStrictEqual({});
  });

  it('are warnings for 5xx answers, with the internal error logged apart and unnamed in the line', async () => {
    const failure = new Error('boom inside');
    const { transport } = fakeTransport({ send: () => Promise.reject(failure) });
    const { logger, lines } = captureLogs();
    await handlerFor(transport, { logger })(inbound('POST', '/v1/messages', { body: REQUEST_BODY }));
    const [internal, exchange] = lines();
    expect(internal).toMatchObject({ level: 50, msg: 'internal error', requestId: 'req_own' });
    expect((internal!['err'] as { message: string }).message).toBe('boom inside');
    expect(exchange).toMatchObject({
      level: 40,
      msg: 'exchange',
      status: 500,
      errorMessage: 'internal error',
    });
    expect(exchange).not.toHaveProperty('error');
  });

  it('log a 4xx answer at info level with its code and message, and the request body when asked', async () => {
    const { transport } = fakeTransport();
    const { logger, lines } = captureLogs();
    await handlerFor(transport, { logger, logBodies: true })(
      inbound('POST', '/v1/messages', { body: '["m"]' }),
    );
    const line = lines()[0]!;
    expect(line).toMatchObject({
      level: 30,
      status: 400,
      error: 'MODEL_EINVAL',
      requestBody: '["m"]',
    });
    expect(JSON.parse(line['responseBody'] as string).error.type).toBe('invalid_request_error');
    await handlerFor(transport, { logger, logBodies: false })(
      inbound('POST', '/v1/messages', { body: '["m"]' }),
    );
    expect(lines()[1]).not.toHaveProperty('requestBody');
    expect(lines()[1]).not.toHaveProperty('responseBody');
  });

  it('log the count of a count_tokens exchange as its input usage', async () => {
    const { transport } = fakeTransport();
    const { logger, lines } = captureLogs();
    await handlerFor(transport, { logger })(
      inbound('POST', '/v1/messages/count_tokens', { body: JSON.stringify({ model: 'm', messages: [] }) }),
    );
    expect(lines()[0]).toMatchObject({ status: 200, model: 'm', usage: { input_tokens: 42 } });
  });
});

describe('answers pinned whole', () => {
  const STREAM_BODY = JSON.stringify({ ...JSON.parse(REQUEST_BODY), stream: true });

  it('refuses a request without the proxy token with 401, its exact message, and no allow header', async () => {
    const { transport } = fakeTransport();
    const response = asJson(
      await handlerFor(transport, { proxyToken: 'proxy-token-1' })(
        inbound('POST', '/v1/messages', { body: REQUEST_BODY }),
      ),
    );
    expect(response.status).toBe(401);
    expect(response.headers).toStrictEqual({ 'content-type': 'application/json', 'request-id': 'req_own' });
    expect(JSON.parse(response.body)).toStrictEqual({
      type: 'error',
      error: {
        type: 'authentication_error',
        message:
          'this proxy requires its token: send it as the x-api-key header or as Authorization: Bearer <token>',
      },
      request_id: 'req_own',
    });
  });

  it('sends no ping before a slow first event when pings are off', async () => {
    const { transport } = fakeTransport({
      async *stream() {
        await new Promise((resolve) => setTimeout(resolve, 30));
        yield* EVENTS;
      },
    });
    const response = await handlerFor(transport)(inbound('POST', '/v1/messages', { body: STREAM_BODY }));
    expect(await collect(response)).toStrictEqual(
      EVENTS.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`),
    );
  });

  it('reports no stop reason for a stream whose message_delta carries none', async () => {
    const { transport } = fakeTransport({
      async *stream() {
        yield EVENTS[0]!;
        yield {
          type: 'message_delta',
          delta: { stop_reason: null, stop_sequence: null },
          usage: { output_tokens: 2 },
        };
        throw new TransportError('MODEL_ETRANSPORT', 'connection reset');
      },
    });
    const recording = recordingTelemetry();
    const response = await handlerFor(transport, { telemetry: recording.telemetry })(
      inbound('POST', '/v1/messages', { body: STREAM_BODY }),
    );
    await collect(response);
    expect(recording.outcomes).toHaveLength(1);
    expect(recording.outcomes[0]).not.toHaveProperty('stopReason');
    expect(recording.outcomes[0]!.record.usage).toStrictEqual({ input_tokens: 12, output_tokens: 2 });
  });
});
