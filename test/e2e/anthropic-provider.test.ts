import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  TransportError,
  createTransport,
  validateMessage,
  validateStreamEvent,
  type ExchangeOptions,
  type MessagesRequest,
  type MessageStreamEvent,
  type ModelTransport,
  type ResponseInfo,
} from '../../src/index.js';
import {
  anthropicSse,
  helloRequest,
  messageStartEvent,
  startScriptedServer,
  step,
  textMessage,
  textStreamEvents,
  toolUseMessage,
  toolUseStreamEvents,
  type ScriptedServer,
} from '../helpers/scripted-server.js';

const API_KEY = 'sk-ant-test-key';

let server: ScriptedServer;
let transport: ModelTransport;
/** Every delay the transport asked to sleep before a retry (the sleep itself returns at once). */
let sleeps: number[];

beforeAll(async () => {
  server = await startScriptedServer();
});
afterAll(async () => {
  await server.close();
});

beforeEach(async () => {
  // A fresh server per test keeps recorded requests and the script independent.
  await server.close();
  server = await startScriptedServer();
  sleeps = [];
  transport = createTransport({
    env: { ANTHROPIC_API_KEY: API_KEY, ANTHROPIC_BASE_URL: server.url },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0,
  });
});
afterEach(async () => {
  await transport.close();
});

/** Runs a stream to its end, returning the events it delivered and the error it ended with, if any. */
async function drain(
  request: MessagesRequest,
  options?: ExchangeOptions,
): Promise<{ events: MessageStreamEvent[]; error: TransportError | undefined }> {
  const events: MessageStreamEvent[] = [];
  try {
    for await (const event of transport.stream(request, options)) events.push(event);
  } catch (error) {
    expect(error).toBeInstanceOf(TransportError);
    return { events, error: error as TransportError };
  }
  return { events, error: undefined };
}

async function sendError(request: MessagesRequest, options?: ExchangeOptions): Promise<TransportError> {
  const error = await transport.send(request, options).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(TransportError);
  return error as TransportError;
}

function anthropicError(type: string, message: string) {
  return { type: 'error', error: { type, message } };
}

describe('native non-streaming exchanges', () => {
  it('returns a text message exactly as the endpoint sent it', async () => {
    server.push(step.json(textMessage('Bonjour')));
    const message = await transport.send(helloRequest());
    expect(message).toEqual(textMessage('Bonjour'));
    expect(validateMessage(message).ok).toBe(true);
  });

  it('returns a tool_use message with its id, name and input intact', async () => {
    server.push(step.json(toolUseMessage()));
    const message = await transport.send(
      helloRequest({ tools: [{ name: 'get_weather', input_schema: { type: 'object' } }] }),
    );
    expect(message).toEqual(toolUseMessage());
    expect(message.stop_reason).toBe('tool_use');
  });

  it('posts the request body to /v1/messages with the key, the default version and JSON headers', async () => {
    server.push(step.json(textMessage()));
    const request = helloRequest({ temperature: 0.5 });
    await transport.send(request);
    expect(server.requests).toHaveLength(1);
    const recorded = server.requests[0]!;
    expect(recorded.method).toBe('POST');
    expect(recorded.url).toBe('/v1/messages');
    expect(recorded.headers['x-api-key']).toBe(API_KEY);
    expect(recorded.headers['anthropic-version']).toBe('2023-06-01');
    expect(recorded.headers['content-type']).toBe('application/json');
    expect(recorded.headers['accept']).toBe('application/json');
    expect(recorded.headers['authorization']).toBeUndefined();
    expect(recorded.json).toEqual(request);
  });

  it("passes the caller's anthropic-version and anthropic-beta headers through, matched case-insensitively", async () => {
    server.push(step.json(textMessage()));
    await transport.send(helloRequest(), {
      headers: {
        'Anthropic-Version': '2026-10-21',
        'ANTHROPIC-BETA': ['tools-2024-05-16', 'prompt-caching-2024-07-31'],
      },
    });
    const recorded = server.requests[0]!;
    expect(recorded.headers['anthropic-version']).toBe('2026-10-21');
    expect(recorded.headers['anthropic-beta']).toBe('tools-2024-05-16,prompt-caching-2024-07-31');
  });

  it('ignores credentials the caller puts in options.headers', async () => {
    server.push(step.json(textMessage()));
    await transport.send(helloRequest(), {
      headers: { 'x-api-key': 'sk-caller', authorization: 'Bearer caller' },
    });
    const recorded = server.requests[0]!;
    expect(recorded.headers['x-api-key']).toBe(API_KEY);
    expect(recorded.headers['authorization']).toBeUndefined();
  });

  it('appends options.query to the path', async () => {
    server.push(step.json(textMessage()), step.json(textMessage()));
    await transport.send(helloRequest(), { query: 'beta=true' });
    await transport.send(helloRequest(), { query: '?beta=true&x=1' });
    expect(server.requests.map((request) => request.url)).toEqual([
      '/v1/messages?beta=true',
      '/v1/messages?beta=true&x=1',
    ]);
  });

  it('sends rawBody byte for byte instead of re-serialising the request', async () => {
    server.push(step.json(textMessage()));
    const raw =
      '{ "max_tokens" : 64,\n  "model":"claude-test", "messages":[{"role":"user","content":"Hello \\u00e9"}] }';
    await transport.send(helloRequest({ messages: [{ role: 'user', content: 'Hello é' }] }), {
      rawBody: raw,
    });
    expect(server.requests[0]!.bodyText).toBe(raw);
  });

  it('reports the status, the pass-on headers and one attempt through onResponse', async () => {
    server.push(
      step.json(textMessage(), {
        headers: { 'request-id': 'req_1', 'anthropic-ratelimit-requests-remaining': '9', 'x-other': 'no' },
      }),
    );
    const infos: ResponseInfo[] = [];
    await transport.send(helloRequest(), { onResponse: (info) => infos.push(info) });
    expect(infos).toEqual([
      {
        status: 200,
        headers: { 'request-id': 'req_1', 'anthropic-ratelimit-requests-remaining': '9' },
        attempts: 1,
      },
    ]);
  });

  it('fails with MODEL_EPROTO when a 200 body is not JSON', async () => {
    server.push(step.text(200, 'hello, not json', { 'content-type': 'application/json' }));
    const error = await sendError(helloRequest());
    expect(error.code).toBe('MODEL_EPROTO');
    expect(error.message).toMatch(/not valid JSON/);
  });

  it('fails with MODEL_EPROTO when a 200 body is JSON but not a message', async () => {
    server.push(step.json({ id: 'x', type: 'completion', completion: 'hi' }));
    const error = await sendError(helloRequest());
    expect(error.code).toBe('MODEL_EPROTO');
    expect(error.body.type).toBe('error');
  });
});

describe('native streaming exchanges', () => {
  it('delivers the text events in order, each a valid stream event', async () => {
    server.push(step.sse(anthropicSse(textStreamEvents(['Hel', 'lo', '!']))));
    const { events, error } = await drain(helloRequest({ stream: true }));
    expect(error).toBeUndefined();
    expect(events).toEqual(textStreamEvents(['Hel', 'lo', '!']));
    for (const event of events) expect(validateStreamEvent(event).ok).toBe(true);
  });

  it('delivers a tool_use block with its input_json_delta fragments in order', async () => {
    server.push(step.sse(anthropicSse(toolUseStreamEvents()), { frameDelayMs: 2 }));
    const { events, error } = await drain(helloRequest({ stream: true }));
    expect(error).toBeUndefined();
    expect(events).toEqual(toolUseStreamEvents());
    const json = events
      .filter((event) => event.type === 'content_block_delta' && event.delta.type === 'input_json_delta')
      .map((event) => (event as { delta: { partial_json: string } }).delta.partial_json)
      .join('');
    expect(JSON.parse(json)).toEqual({ city: 'Paris' });
  });

  it('posts stream: true with an event-stream accept header, even when the request did not say stream', async () => {
    server.push(step.sse(anthropicSse(textStreamEvents())));
    await drain(helloRequest());
    const recorded = server.requests[0]!;
    expect(recorded.url).toBe('/v1/messages');
    expect(recorded.headers['accept']).toBe('text/event-stream');
    expect(recorded.headers['x-api-key']).toBe(API_KEY);
    expect(recorded.json).toEqual({ ...helloRequest(), stream: true });
  });

  it('sends a streaming rawBody byte for byte, with the caller headers and query', async () => {
    server.push(step.sse(anthropicSse(textStreamEvents())));
    const raw =
      '{"model":"claude-test","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"Hello"}]}\n';
    const { error } = await drain(helloRequest({ stream: true }), {
      rawBody: raw,
      query: 'beta=true',
      headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' },
    });
    expect(error).toBeUndefined();
    const recorded = server.requests[0]!;
    expect(recorded.bodyText).toBe(raw);
    expect(recorded.url).toBe('/v1/messages?beta=true');
    expect(recorded.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
    expect(recorded.headers['anthropic-version']).toBe('2023-06-01');
  });

  it('reassembles events split across TCP writes, even inside a multi-byte character', async () => {
    const events = textStreamEvents(['héllo wörld 👋', ' ✓']);
    const bytes = Buffer.from(anthropicSse(events).join(''));
    const emoji = bytes.indexOf(Buffer.from('👋'));
    // Cut inside the emoji, inside "event:", and between the CR-less line ends of one frame.
    const cuts = [3, 40, emoji + 1, emoji + 3, bytes.indexOf('\n\n', emoji) + 1, bytes.length - 5];
    server.push(
      step.handle(async ({ response }) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        let from = 0;
        for (const to of [...cuts, bytes.length]) {
          response.write(bytes.subarray(from, to));
          from = to;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        response.end();
      }),
    );
    const result = await drain(helloRequest({ stream: true }));
    expect(result.error).toBeUndefined();
    expect(result.events).toEqual(events);
  });

  it('passes ping events through and skips event types it does not know', async () => {
    const [start, blockStart, ...rest] = textStreamEvents(['Hi']);
    const frames = [
      ...anthropicSse([start!, { type: 'ping' }]),
      'event: future_thing\ndata: {"type":"future_thing","detail":{"x":1}}\n\n',
      ...anthropicSse([blockStart!]),
      'event: another_new_event\ndata: {"type":"another_new_event"}\n\n',
      ...anthropicSse(rest),
    ];
    server.push(step.sse(frames));
    const { events, error } = await drain(helloRequest({ stream: true }));
    expect(error).toBeUndefined();
    expect(events.map((event) => event.type)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  it('delivers a stream that sends ping before message_start, from message_start on', async () => {
    // Some Messages-compatible servers send a keep-alive ping as soon as the stream opens. It carries
    // nothing, and a Messages stream must begin with message_start, so it is not passed on.
    const events = textStreamEvents(['Hi']);
    server.push(step.sse(anthropicSse([{ type: 'ping' }, { type: 'ping' }, ...events])));
    const result = await drain(helloRequest({ stream: true }));
    expect(result.error).toBeUndefined();
    expect(result.events).toEqual(events);
  });

  it('raises a mid-stream error event as MODEL_EHTTP after delivering the events before it', async () => {
    const before = textStreamEvents(['partial']).slice(0, 3);
    server.push(
      step.sse([
        ...anthropicSse(before),
        ...anthropicSse([anthropicError('overloaded_error', 'Overloaded')]),
      ]),
    );
    const { events, error } = await drain(helloRequest({ stream: true }));
    expect(events).toEqual(before);
    expect(error?.code).toBe('MODEL_EHTTP');
    expect(error?.status).toBe(529);
    expect(error?.body.error.type).toBe('overloaded_error');
    expect(error?.message).toContain('Overloaded');
    expect(server.requests).toHaveLength(1);
  });

  it('fails with MODEL_EPROTO when the stream ends before message_stop', async () => {
    const events = textStreamEvents(['cut']);
    server.push(step.sse(anthropicSse(events.slice(0, -2))));
    const result = await drain(helloRequest({ stream: true }));
    expect(result.events).toEqual(events.slice(0, -2));
    expect(result.error?.code).toBe('MODEL_EPROTO');
    expect(result.error?.message).toMatch(/message_stop/);
  });

  it('fails with MODEL_EPROTO on an event whose data is not JSON', async () => {
    server.push(
      step.sse([
        ...anthropicSse([messageStartEvent()]),
        'event: content_block_start\ndata: {"type":"content_block_start",\n\n',
      ]),
    );
    const result = await drain(helloRequest({ stream: true }));
    expect(result.events).toEqual([messageStartEvent()]);
    expect(result.error?.code).toBe('MODEL_EPROTO');
    expect(result.error?.message).toMatch(/not valid JSON/);
  });

  it('fails with MODEL_EPROTO on a known event with the wrong shape', async () => {
    server.push(
      step.sse([
        ...anthropicSse([messageStartEvent()]),
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":"zero"}\n\n',
      ]),
    );
    const result = await drain(helloRequest({ stream: true }));
    expect(result.error?.code).toBe('MODEL_EPROTO');
    expect(result.error?.message).toMatch(/invalid event/);
  });

  it('fails with MODEL_EPROTO when a delta arrives before its block started', async () => {
    server.push(
      step.sse(
        anthropicSse([
          messageStartEvent(),
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x' } },
        ]),
      ),
    );
    const result = await drain(helloRequest({ stream: true }));
    expect(result.events).toEqual([messageStartEvent()]);
    expect(result.error?.code).toBe('MODEL_EPROTO');
    expect(result.error?.message).toMatch(/event order/);
  });

  it('fails with MODEL_EPROTO when a stream does not begin with message_start', async () => {
    server.push(step.sse(anthropicSse(textStreamEvents().slice(1))));
    const result = await drain(helloRequest({ stream: true }));
    expect(result.events).toEqual([]);
    expect(result.error?.code).toBe('MODEL_EPROTO');
  });

  it('fails with MODEL_EPROTO when a stream request is answered with JSON instead of events', async () => {
    server.push(step.json(textMessage()));
    const result = await drain(helloRequest({ stream: true }), { maxRetries: 0 });
    expect(result.events).toEqual([]);
    expect(result.error?.code).toBe('MODEL_EPROTO');
    expect(result.error?.message).toMatch(/text\/event-stream/);
  });
});

describe('upstream error statuses', () => {
  it.each([
    { status: 400, type: 'invalid_request_error' },
    { status: 401, type: 'authentication_error' },
    { status: 403, type: 'permission_error' },
    { status: 404, type: 'not_found_error' },
    { status: 413, type: 'request_too_large' },
    { status: 429, type: 'rate_limit_error' },
    { status: 500, type: 'api_error' },
    { status: 529, type: 'overloaded_error' },
  ])(
    'maps $status $type to the right code with that status and type, for send and stream',
    async ({ status, type }) => {
      // A refused credential is MODEL_EAUTH (DESIGN.md); every other status is MODEL_EHTTP.
      const code = status === 401 ? 'MODEL_EAUTH' : 'MODEL_EHTTP';
      const body = anthropicError(type, `upstream says ${status}`);
      const headers = { 'request-id': `req_${status}` };
      server.push(step.json(body, { status, headers }), step.json(body, { status, headers }));

      const sent = await sendError(helloRequest(), { maxRetries: 0 });
      expect(sent.code).toBe(code);
      expect(sent.status).toBe(status);
      expect(sent.provider).toBe('anthropic');
      expect(sent.requestId).toBe(`req_${status}`);
      expect(sent.body).toEqual({
        type: 'error',
        error: { type, message: expect.stringContaining(`upstream says ${status}`) as string },
        request_id: `req_${status}`,
      });

      const streamed = await drain(helloRequest({ stream: true }), { maxRetries: 0 });
      expect(streamed.events).toEqual([]);
      expect(streamed.error?.code).toBe(code);
      expect(streamed.error?.status).toBe(status);
      expect(streamed.error?.body.error.type).toBe(type);
      expect(server.requests).toHaveLength(2);
    },
  );

  it('explains an HTML error page by its status and by not being JSON', async () => {
    server.push(
      step.text(
        502,
        '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>',
      ),
    );
    const error = await sendError(helloRequest(), { maxRetries: 0 });
    expect(error.code).toBe('MODEL_EHTTP');
    expect(error.status).toBe(502);
    expect(error.body.error.type).toBe('api_error');
    expect(error.message).toContain('502');
    expect(error.message).toMatch(/not JSON/);
    expect(error.message).toContain('Bad Gateway');
  });

  it('explains an empty error body by its status', async () => {
    server.push(step.text(503, '', { 'content-type': 'text/plain' }));
    const error = await sendError(helloRequest(), { maxRetries: 0 });
    expect(error.code).toBe('MODEL_EHTTP');
    expect(error.message).toContain('503');
    expect(error.message).toMatch(/empty body/);
  });
});

describe('retries', () => {
  it('retries a 529 and returns the message of the second attempt', async () => {
    server.push(
      step.json(anthropicError('overloaded_error', 'Overloaded'), { status: 529 }),
      step.json(textMessage('second')),
    );
    const infos: ResponseInfo[] = [];
    const message = await transport.send(helloRequest(), { onResponse: (info) => infos.push(info) });
    expect(message).toEqual(textMessage('second'));
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.bodyText).toBe(server.requests[0]!.bodyText);
    expect(sleeps).toEqual([500]);
    expect(infos).toEqual([{ status: 200, headers: {}, attempts: 2 }]);
  });

  it('honours retry-after on a 429 before retrying', async () => {
    server.push(
      step.json(anthropicError('rate_limit_error', 'slow down please'), {
        status: 429,
        headers: { 'retry-after': '2' },
      }),
      step.json(textMessage()),
    );
    const message = await transport.send(helloRequest());
    expect(message).toEqual(textMessage());
    expect(server.requests).toHaveLength(2);
    expect(sleeps).toEqual([2_000]);
  });

  it('honours a retry-after HTTP-date, waiting until that second', async () => {
    const inThreeSeconds = new Date(Date.now() + 3_000).toUTCString();
    server.push(
      step.json(anthropicError('rate_limit_error', 'limited'), {
        status: 429,
        headers: { 'retry-after': inThreeSeconds },
      }),
      step.json(textMessage()),
    );
    await expect(transport.send(helloRequest())).resolves.toEqual(textMessage());
    expect(sleeps).toHaveLength(1);
    // An HTTP-date has whole seconds: the wait is the rest of the current second plus two more.
    expect(sleeps[0]).toBeGreaterThan(1_900);
    expect(sleeps[0]).toBeLessThanOrEqual(3_000);
  });

  it('honours a retry-after longer than a minute when the wait fits in the total deadline', async () => {
    server.push(
      step.json(anthropicError('rate_limit_error', 'limited'), {
        status: 429,
        headers: { 'retry-after': '90' },
      }),
      step.json(textMessage()),
    );
    await expect(transport.send(helloRequest())).resolves.toEqual(textMessage());
    expect(sleeps).toEqual([90_000]);
  });

  it('fails at once with the retryable error when retry-after runs past the total deadline', async () => {
    server.push(
      step.json(anthropicError('rate_limit_error', 'limited'), {
        status: 429,
        headers: { 'retry-after': '3600' },
      }),
      step.json(textMessage()),
    );
    const error = await transport
      .send(helloRequest(), { timeoutMs: 120_000 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TransportError);
    const failure = error as TransportError;
    expect([failure.code, failure.status, failure.body.error.type, failure.retryable]).toEqual([
      'MODEL_EHTTP',
      429,
      'rate_limit_error',
      true,
    ]);
    expect(failure.headers['retry-after']).toBe('3600');
    expect(failure.headers['x-should-retry']).toBe('false');
    expect(sleeps).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    ['retry-after', '0'],
    ['retry-after-ms', '0'],
  ])('backs off instead of retrying at once on %s: %s', async (name, value) => {
    server.push(
      step.json(anthropicError('rate_limit_error', 'limited'), { status: 429, headers: { [name]: value } }),
      step.json(textMessage()),
    );
    await expect(transport.send(helloRequest())).resolves.toEqual(textMessage());
    expect(sleeps).toEqual([500]);
  });

  it('honours retry-after-ms before retry-after', async () => {
    server.push(
      step.json(anthropicError('rate_limit_error', 'limited'), {
        status: 429,
        headers: { 'retry-after': '9', 'retry-after-ms': '120' },
      }),
      step.json(textMessage()),
    );
    await transport.send(helloRequest());
    expect(sleeps).toEqual([120]);
  });

  it('backs off exponentially over the default two retries, then fails with the last error', async () => {
    const failing = await startScriptedServer((record) =>
      step.json(anthropicError('api_error', `boom ${record.index}`), { status: 500 }),
    );
    const retrying = createTransport({
      env: { ANTHROPIC_API_KEY: API_KEY, ANTHROPIC_BASE_URL: failing.url },
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      random: () => 0,
    });
    try {
      const error = await retrying.send(helloRequest()).catch((caught: unknown) => caught as TransportError);
      expect(error).toBeInstanceOf(TransportError);
      expect(error.code).toBe('MODEL_EHTTP');
      expect(error.status).toBe(500);
      expect(error.message).toContain('boom 2');
      expect(failing.requests).toHaveLength(3);
      expect(sleeps).toEqual([500, 1_000]);
    } finally {
      await retrying.close();
      await failing.close();
    }
  });

  it('does not retry a 400', async () => {
    server.push(
      step.json(anthropicError('invalid_request_error', 'bad'), { status: 400 }),
      step.json(textMessage()),
    );
    const error = await sendError(helloRequest());
    expect(error.status).toBe(400);
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('honours maxRetries: 0 per exchange', async () => {
    server.push(
      step.json(anthropicError('overloaded_error', 'Overloaded'), { status: 529 }),
      step.json(textMessage()),
    );
    const error = await sendError(helloRequest(), { maxRetries: 0 });
    expect(error.status).toBe(529);
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('honours maxRetries: 0 set on the transport', async () => {
    const noRetries = createTransport({
      env: { ANTHROPIC_API_KEY: API_KEY, ANTHROPIC_BASE_URL: server.url },
      maxRetries: 0,
    });
    try {
      server.push(
        step.json(anthropicError('overloaded_error', 'Overloaded'), { status: 529 }),
        step.json(textMessage()),
      );
      await expect(noRetries.send(helloRequest())).rejects.toMatchObject({
        code: 'MODEL_EHTTP',
        status: 529,
      });
      expect(server.requests).toHaveLength(1);
    } finally {
      await noRetries.close();
    }
  });

  it('does not retry a 500 that says x-should-retry: false', async () => {
    server.push(
      step.json(anthropicError('api_error', 'do not'), {
        status: 500,
        headers: { 'x-should-retry': 'false' },
      }),
      step.json(textMessage()),
    );
    const error = await sendError(helloRequest());
    expect(error.status).toBe(500);
    expect(error.retryable).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a 400 that says x-should-retry: true', async () => {
    server.push(
      step.json(anthropicError('invalid_request_error', 'try again'), {
        status: 400,
        headers: { 'x-should-retry': 'true' },
      }),
      step.json(textMessage()),
    );
    await expect(transport.send(helloRequest())).resolves.toEqual(textMessage());
    expect(server.requests).toHaveLength(2);
  });

  it('retries a connection reset before the headers', async () => {
    server.push(step.reset('before-headers'), step.json(textMessage()));
    await expect(transport.send(helloRequest())).resolves.toEqual(textMessage());
    expect(server.requests).toHaveLength(2);
  });

  it('retries a stream whose first attempt failed before any event', async () => {
    server.push(
      step.json(anthropicError('overloaded_error', 'Overloaded'), { status: 529 }),
      step.sse(anthropicSse(textStreamEvents())),
    );
    const { events, error } = await drain(helloRequest({ stream: true }));
    expect(error).toBeUndefined();
    expect(events).toEqual(textStreamEvents());
    expect(server.requests).toHaveLength(2);
  });

  it('never retries a stream once an event reached the caller', async () => {
    server.push(
      step.sse(anthropicSse([messageStartEvent()]), { then: 'reset' }),
      step.sse(anthropicSse(textStreamEvents())),
    );
    const { events, error } = await drain(helloRequest({ stream: true }), { maxRetries: 5 });
    expect(events).toEqual([messageStartEvent()]);
    expect(['MODEL_ETRANSPORT', 'MODEL_EPROTO']).toContain(error?.code);
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('never retries a stream that failed mid-way with an error event, even a retryable one', async () => {
    server.push(
      step.sse([
        ...anthropicSse([messageStartEvent()]),
        ...anthropicSse([anthropicError('overloaded_error', 'Overloaded')]),
      ]),
      step.sse(anthropicSse(textStreamEvents())),
    );
    const { events, error } = await drain(helloRequest({ stream: true }));
    expect(events).toEqual([messageStartEvent()]);
    expect(error?.body.error.type).toBe('overloaded_error');
    expect(server.requests).toHaveLength(1);
  });
});
