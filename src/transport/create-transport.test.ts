/**
 * `createTransport` itself: its options checked at creation, what it shows of its configuration, and
 * the attempt loop (retries, waits, `x-should-retry`, `onResponse`) against a scripted upstream on
 * loopback.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TransportError } from '../errors.js';
import {
  anthropicSse,
  helloRequest,
  messageStartEvent,
  startScriptedServer,
  step,
  textMessage,
  textStreamEvents,
  type ScriptedServer,
} from '../../test/helpers/scripted-server.js';
import { createTransport, DEFAULT_DEADLINES } from './create-transport.js';
import type { ModelTransport, ResponseInfo, TransportOptions } from './types.js';

const KEY = 'sk-ant-create-transport';

function creationError(options: TransportOptions): TransportError {
  try {
    createTransport({ env: {}, ...options });
  } catch (error) {
    return error as TransportError;
  }
  throw new Error('expected createTransport to refuse the options');
}

async function rejection(promise: Promise<unknown>): Promise<TransportError> {
  try {
    await promise;
  } catch (error) {
    return error as TransportError;
  }
  throw new Error('expected a rejection');
}

describe('createTransport: options checked at creation', () => {
  it('has the documented default deadlines', () => {
    expect(DEFAULT_DEADLINES).toStrictEqual({
      connectTimeoutMs: 10_000,
      firstByteTimeoutMs: 60_000,
      idleTimeoutMs: 120_000,
      timeoutMs: 600_000,
    });
    expect(Object.isFrozen(DEFAULT_DEADLINES)).toBe(true);
  });

  it.each([
    ['connectTimeoutMs', -1, 'connectTimeoutMs must be a number of milliseconds ≥ 0, got -1'],
    ['firstByteTimeoutMs', Number.NaN, 'firstByteTimeoutMs must be a number of milliseconds ≥ 0, got NaN'],
    [
      'idleTimeoutMs',
      Number.POSITIVE_INFINITY,
      'idleTimeoutMs must be a number of milliseconds ≥ 0, got Infinity',
    ],
    ['timeoutMs', -0.5, 'timeoutMs must be a number of milliseconds ≥ 0, got -0.5'],
    ['maxRetries', -1, 'maxRetries must be a whole number ≥ 0, got -1'],
    ['maxRetries', 1.5, 'maxRetries must be a whole number ≥ 0, got 1.5'],
    ['maxResponseBytes', -2, 'maxResponseBytes must be a whole number ≥ 0, got -2'],
  ] as const)('refuses %s = %s with MODEL_ECONFIG', (name, value, message) => {
    const error = creationError({ anthropicApiKey: KEY, [name]: value });
    expect([error.code, error.status, error.message]).toStrictEqual(['MODEL_ECONFIG', 500, message]);
  });

  it('accepts deadlines and counts of 0', () => {
    expect(() =>
      createTransport({
        env: {},
        anthropicApiKey: KEY,
        connectTimeoutMs: 0,
        firstByteTimeoutMs: 0,
        idleTimeoutMs: 0,
        timeoutMs: 0,
        maxRetries: 0,
        maxResponseBytes: 0,
      }).close(),
    ).not.toThrow();
  });
});

describe('createTransport: what it shows of its configuration', () => {
  it('describes a tpx selection with its dialect, token source and wire, frozen', async () => {
    const transport = createTransport({
      env: { TPX_OAUTH_TOKEN: 'tok-123456', TPX_BASE_URL: 'http://user:secret@127.0.0.1:9/v1/' },
    });
    expect(transport.provider).toBe('tpx');
    expect(transport.selection).toStrictEqual({
      provider: 'tpx',
      reason: 'TPX_OAUTH_TOKEN is set and ANTHROPIC_API_KEY is not',
      dialect: {
        name: 'openai-generic',
        reason: expect.stringMatching(/^the TPX_BASE_URL host 127\.0\.0\.1 is not a known service/) as string,
      },
      tokenSource: { kind: 'static', origin: 'TPX_OAUTH_TOKEN' },
      wire: { name: 'chat', reason: 'the default of the openai-generic dialect' },
    });
    expect(Object.isFrozen(transport.selection.dialect)).toBe(true);
    expect(Object.isFrozen(transport.selection.tokenSource)).toBe(true);
    expect(Object.isFrozen(transport.selection.wire)).toBe(true);
    expect(transport.upstreamPolicy!.baseUrl).toBe('http://127.0.0.1:9/v1');
    expect(Object.isFrozen(transport.upstreamPolicy!)).toBe(true);
    await transport.close();
  });

  it('shows the anthropic base URL, and none for the none provider', async () => {
    const anthropic = createTransport({ env: { ANTHROPIC_API_KEY: KEY } });
    expect(anthropic.selection).toStrictEqual({ provider: 'anthropic', reason: 'ANTHROPIC_API_KEY is set' });
    expect(anthropic.upstreamPolicy!.baseUrl).toBe('https://api.anthropic.com');
    const none = createTransport({ env: {} });
    expect('baseUrl' in none.upstreamPolicy!).toBe(false);
    expect(none.upstreamPolicy!).toMatchObject({
      modelRules: [],
      usesUpstreamModelList: false,
      capsToContextWindow: false,
    });
    await anthropic.close();
    await none.close();
  });

  it('states its model rules, catch-all and output cap in its policy', async () => {
    const transport = createTransport({
      env: { TPX_OAUTH_TOKEN: 'tok-123456', TPX_BASE_URL: 'http://127.0.0.1:9/v1', TPX_MODEL: 'fallback' },
      modelMap: '*haiku*=small',
      maxOutputTokens: 4096,
      inspectUpstream: true,
    });
    expect(transport.upstreamPolicy!).toMatchObject({
      modelRules: [{ pattern: '*haiku*', model: 'small' }],
      catchAllModel: 'fallback',
      usesUpstreamModelList: true,
      maxTokens: 4096,
      capsToContextWindow: true,
    });
    expect(await transport.upstreamPolicy!.resolveModel('claude-haiku-4-5')).toStrictEqual({
      model: 'small',
      reason: 'the modelMap option rule *haiku*',
    });
    await transport.close();
  });
});

describe('createTransport: the none provider', () => {
  it('cannot inspect an upstream, and refuses every exchange with 401', async () => {
    const transport = createTransport({ env: {} });
    const inspect = await rejection(transport.inspectUpstream!());
    expect([inspect.code, inspect.status, inspect.body.error.type, inspect.message]).toStrictEqual([
      'MODEL_EAUTH',
      401,
      'authentication_error',
      'the none provider has no upstream to inspect',
    ]);
    expect((await rejection(transport.countTokens!({ model: 'm', messages: [] }))).code).toBe('MODEL_EAUTH');
    expect((await rejection(transport.listModels!())).code).toBe('MODEL_EAUTH');
    await transport.close();
  });
});

describe('createTransport: a closed transport', () => {
  it('refuses every operation with MODEL_ECONFIG', async () => {
    const transport = createTransport({ env: { ANTHROPIC_API_KEY: KEY } });
    await transport.close();
    const message = 'this transport was closed; create a new one';
    for (const attempt of [
      () => transport.send(helloRequest()),
      () => transport.countTokens!({ model: 'm', messages: [] }),
      () => transport.listModels!(),
      () => transport.inspectUpstream!(),
      async () => {
        for await (const _event of transport.stream(helloRequest({ stream: true })));
      },
    ]) {
      const error = await rejection(attempt());
      expect([error.code, error.message]).toStrictEqual(['MODEL_ECONFIG', message]);
    }
  });
});

describe('createTransport: the attempt loop', () => {
  let server: ScriptedServer;
  const transports: ModelTransport[] = [];
  beforeAll(async () => {
    server = await startScriptedServer();
  });
  afterEach(async () => {
    await Promise.all(transports.splice(0).map((transport) => transport.close()));
  });
  afterAll(async () => {
    await server.close();
  });

  /** An anthropic transport on the scripted server that records its waits instead of sleeping. */
  function transportWith(options: TransportOptions = {}) {
    const waits: number[] = [];
    const transport = createTransport({
      env: {},
      anthropicApiKey: KEY,
      anthropicBaseUrl: server.url,
      random: () => 0,
      sleep: async (ms) => {
        waits.push(ms);
      },
      ...options,
    });
    transports.push(transport);
    return { transport, waits };
  }

  const overloaded = (headers: Record<string, string> = {}) =>
    step.json(
      { type: 'error', error: { type: 'overloaded_error', message: 'busy' } },
      { status: 529, headers },
    );
  const badRequest = () =>
    step.json({ type: 'error', error: { type: 'invalid_request_error', message: 'no' } }, { status: 400 });

  it('retries twice by default, backing off 500 then 1,000 ms, and reports the attempts', async () => {
    const { transport, waits } = transportWith();
    server.push(overloaded(), overloaded(), step.json(textMessage()));
    const responses: ResponseInfo[] = [];
    const before = server.requests.length;
    expect(
      await transport.send(helloRequest(), { onResponse: (info) => responses.push(info) }),
    ).toStrictEqual(textMessage());
    expect(server.requests.length - before).toBe(3);
    expect(waits).toStrictEqual([500, 1_000]);
    expect(responses.map(({ status, attempts }) => [status, attempts])).toStrictEqual([[200, 3]]);
  });

  it('ends with the last error, saying x-should-retry: false, once its retries are spent', async () => {
    const { transport, waits } = transportWith({ maxRetries: 1 });
    server.push(overloaded(), overloaded());
    const responses: ResponseInfo[] = [];
    const error = await rejection(
      transport.send(helloRequest(), { onResponse: (info) => responses.push(info) }),
    );
    expect([error.code, error.status, error.retryable, error.headers['x-should-retry']]).toStrictEqual([
      'MODEL_EHTTP',
      529,
      true,
      'false',
    ]);
    expect(waits).toStrictEqual([500]);
    expect(responses.map(({ status, attempts }) => [status, attempts])).toStrictEqual([[529, 2]]);
  });

  it('takes the call’s maxRetries over the transport’s, and adds no hint when none were allowed', async () => {
    const { transport, waits } = transportWith({ maxRetries: 3 });
    server.push(overloaded());
    const error = await rejection(transport.send(helloRequest(), { maxRetries: 0 }));
    expect([error.status, error.headers['x-should-retry']]).toStrictEqual([529, undefined]);
    expect(waits).toStrictEqual([]);
    const refused = await rejection(transport.send(helloRequest(), { maxRetries: -1 }));
    expect([refused.code, refused.message]).toStrictEqual([
      'MODEL_ECONFIG',
      'maxRetries must be a whole number ≥ 0, got -1',
    ]);
  });

  it('does not retry a failure that is not retryable, unless the upstream says x-should-retry: true', async () => {
    const { transport, waits } = transportWith();
    server.push(badRequest());
    const error = await rejection(transport.send(helloRequest()));
    expect([error.status, error.headers['x-should-retry']]).toStrictEqual([400, undefined]);
    expect(waits).toStrictEqual([]);
    server.push(
      step.json(
        { type: 'error', error: { type: 'invalid_request_error', message: 'no' } },
        {
          status: 400,
          headers: { 'x-should-retry': 'true' },
        },
      ),
      step.json(textMessage()),
    );
    expect(await transport.send(helloRequest())).toStrictEqual(textMessage());
    expect(waits).toStrictEqual([500]);
  });

  it('does not retry a retryable failure the upstream marks x-should-retry: false', async () => {
    const { transport, waits } = transportWith();
    server.push(overloaded({ 'x-should-retry': 'false' }));
    const error = await rejection(transport.send(helloRequest()));
    expect([error.status, error.headers['x-should-retry']]).toStrictEqual([529, 'false']);
    expect(waits).toStrictEqual([]);
  });

  it('waits what retry-after asks, when the next attempt still fits in the total deadline', async () => {
    const { transport, waits } = transportWith({ timeoutMs: 60_000 });
    server.push(overloaded({ 'retry-after': '2' }), step.json(textMessage()));
    await transport.send(helloRequest());
    expect(waits).toStrictEqual([2_000]);
  });

  it('ends at once, saying x-should-retry: false, when the wait asked for would pass the total deadline', async () => {
    const { transport, waits } = transportWith({ timeoutMs: 1_500 });
    server.push(overloaded({ 'retry-after': '2' }));
    const error = await rejection(transport.send(helloRequest()));
    expect([error.status, error.headers['x-should-retry']]).toStrictEqual([529, 'false']);
    expect(waits).toStrictEqual([]);
  });

  it('without a total deadline, waits up to ten minutes and no longer', async () => {
    const { transport, waits } = transportWith({ timeoutMs: 0 });
    server.push(overloaded({ 'retry-after': '600' }), step.json(textMessage()));
    await transport.send(helloRequest());
    expect(waits).toStrictEqual([600_000]);
    server.push(overloaded({ 'retry-after': '601' }));
    const error = await rejection(transport.send(helloRequest()));
    expect(error.headers['x-should-retry']).toBe('false');
    expect(waits).toStrictEqual([600_000]);
  });

  it('ends with MODEL_EABORTED when the caller cancels during the wait', async () => {
    const controller = new AbortController();
    const { transport } = transportWith({
      sleep: async () => {
        controller.abort();
      },
    });
    server.push(overloaded());
    const error = await rejection(transport.send(helloRequest(), { signal: controller.signal }));
    expect([error.code, error.message]).toStrictEqual([
      'MODEL_EABORTED',
      'the exchange was cancelled by the caller',
    ]);
  });

  it('retries a stream that failed before its first event, and never one that delivered events', async () => {
    const { transport, waits } = transportWith();
    server.push(overloaded(), step.sse(anthropicSse(textStreamEvents(['a']))));
    const events: unknown[] = [];
    for await (const event of transport.stream(helloRequest({ stream: true }))) events.push(event);
    expect(events).toStrictEqual(textStreamEvents(['a']));
    expect(waits).toStrictEqual([500]);
    server.push(step.sse(anthropicSse([messageStartEvent()]), { then: 'reset' }));
    const delivered: unknown[] = [];
    const error = await rejection(
      (async () => {
        for await (const event of transport.stream(helloRequest({ stream: true }))) delivered.push(event);
      })(),
    );
    expect(delivered).toStrictEqual([messageStartEvent()]);
    expect(error.code).toBe('MODEL_ETRANSPORT');
    expect(waits).toStrictEqual([500]);
  });
});
