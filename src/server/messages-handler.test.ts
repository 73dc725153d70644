import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { TransportError } from '../errors.js';
import type { Message, MessagesRequest, MessageStreamEvent } from '../protocol/messages.js';
import type { CountTokensRequest, ExchangeOptions, ModelTransport } from '../transport/types.js';
import { createMessagesHandler, type MessagesHandlerOptions } from './messages-handler.js';
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
  options: { headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {},
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
