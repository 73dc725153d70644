/**
 * Request shaping through `createTransport`, against a scripted upstream on loopback: the model a
 * request goes to (map rules, the `TPX_MODEL` catch-all, the upstream's own list), the `max_tokens` sent
 * (configured cap, context window), what the caller hears back (the model it asked for), what
 * `onResponse` reports, and when the caller's own bytes may still be sent as they are.
 */
import { describe, expect, it } from 'vitest';
import type { ResponseInfo } from '../../src/transport/types.js';
import {
  anthropicSse,
  helloRequest,
  messageStartEvent,
  openAiSse,
  step,
  textMessage,
  textStreamEvents,
  type RecordedRequest,
  type Step,
} from '../helpers/scripted-server.js';
import { rejection, useScriptedUpstream } from './scripted-upstream.js';

const KEY = 'sk-ant-request-shaping';
const TOKEN = 'tok-request-shaping';

const upstream = useScriptedUpstream({ key: KEY, token: TOKEN }, { maxRetries: 0 });
const { anthropicTransport, tpxTransport } = upstream;

/** The requests the upstream received from `from` on, as method, path and JSON body. */
function receivedSince(from: number): [string, string, unknown][] {
  return upstream.server.requests.slice(from).map((record) => [record.method, record.url, record.json]);
}

/** The model and max_tokens of every message request the upstream received from `from` on. */
function sentSince(from: number): { model: unknown; max_tokens: unknown }[] {
  return upstream.server.requests
    .slice(from)
    .filter((record) => record.method === 'POST')
    .map((record) => {
      const body = record.json as { model: unknown; max_tokens: unknown };
      return { model: body.model, max_tokens: body.max_tokens };
    });
}

/** An Anthropic message as an upstream serving `model` answers it. */
function servedMessage(model: string) {
  return { ...textMessage(), model };
}

/** An OpenAI-compatible completion from `model`. */
function completion(model: string) {
  return {
    id: 'chatcmpl-shaping',
    object: 'chat.completion',
    created: 1,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
  };
}

/** The message the tpx path makes of {@link completion}, for a request that asked for `model`. */
function translatedCompletion(model: string) {
  return {
    id: 'msg_chatcmpl-shaping',
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text: 'Hi there' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 9, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}

/**
 * A vLLM-like upstream: `GET /v1/models` lists `models` (with `max_model_len` where given), `GET
 * /props` states `propsWindow` (404 when absent), and a chat completion echoes the model asked for.
 */
function openAiUpstream(
  models: readonly { id: string; max_model_len?: number }[],
  propsWindow?: number,
): (record: RecordedRequest) => Step {
  return (record) => {
    if (record.method === 'GET' && record.url === '/v1/models') {
      return step.json({ object: 'list', data: models.map((model) => ({ object: 'model', ...model })) });
    }
    if (record.method === 'GET' && record.url === '/props') {
      return propsWindow === undefined
        ? step.json({ error: 'not found' }, { status: 404 })
        : step.json({ default_generation_settings: { n_ctx: propsWindow } });
    }
    // What a server answers on a route it does not have (an explicit inspection asks a few).
    if (record.method === 'GET') return step.json({ error: 'not found' }, { status: 404 });
    const body = record.json as { model: string };
    return step.json(completion(body.model));
  };
}

describe('the model a request goes to', () => {
  it('sends a request a map rule matches to the rule’s model, and tells the caller the model it asked for', async () => {
    const transport = anthropicTransport({ modelMap: 'claude-*=upstream-large' });
    upstream.answer = (record) => step.json(servedMessage((record.json as { model: string }).model));
    const from = upstream.server.requests.length;
    const responses: ResponseInfo[] = [];
    const message = await transport.send(helloRequest(), { onResponse: (info) => responses.push(info) });
    expect(sentSince(from)).toStrictEqual([{ model: 'upstream-large', max_tokens: 64 }]);
    expect(message).toStrictEqual(servedMessage('claude-test'));
    expect(responses).toStrictEqual([
      { status: 200, headers: {}, attempts: 1, upstreamModel: 'upstream-large' },
    ]);
  });

  it('leaves a request no rule matches as it is, and the model the upstream names in its answer', async () => {
    const transport = anthropicTransport({ modelMap: '*haiku*=upstream-small' });
    upstream.answer = () => step.json(servedMessage('named-by-upstream'));
    const from = upstream.server.requests.length;
    const responses: ResponseInfo[] = [];
    const message = await transport.send(helloRequest(), { onResponse: (info) => responses.push(info) });
    expect(sentSince(from)).toStrictEqual([{ model: 'claude-test', max_tokens: 64 }]);
    expect(message).toStrictEqual(servedMessage('named-by-upstream'));
    expect(responses).toStrictEqual([{ status: 200, headers: {}, attempts: 1 }]);
  });

  it('sends every request to the TPX_MODEL catch-all when there are no rules', async () => {
    const transport = tpxTransport({ tpxModel: 'served-catch-all' });
    upstream.answer = openAiUpstream([]);
    const from = upstream.server.requests.length;
    const responses: ResponseInfo[] = [];
    const message = await transport.send(helloRequest(), { onResponse: (info) => responses.push(info) });
    expect(sentSince(from)).toStrictEqual([{ model: 'served-catch-all', max_tokens: 64 }]);
    expect(message).toStrictEqual(translatedCompletion('claude-test'));
    expect(responses).toStrictEqual([
      { status: 200, headers: {}, attempts: 1, upstreamModel: 'served-catch-all' },
    ]);
  });

  it('on the tpx path with inspectUpstream, sends a Claude name to the upstream’s only listed model', async () => {
    const transport = tpxTransport({ inspectUpstream: true });
    upstream.answer = openAiUpstream([{ id: 'only-model' }]);
    const from = upstream.server.requests.length;
    const message = await transport.send(helloRequest());
    expect(receivedSince(from)).toStrictEqual([
      ['GET', '/v1/models', undefined],
      ['GET', '/props', undefined],
      [
        'POST',
        '/v1/chat/completions',
        expect.objectContaining({ model: 'only-model', max_tokens: 64 }) as unknown,
      ],
    ]);
    expect(message).toStrictEqual(translatedCompletion('claude-test'));
  });

  it('on the tpx path with inspectUpstream, refuses a model the upstream does not list, before sending it', async () => {
    const transport = tpxTransport({ inspectUpstream: true });
    upstream.answer = openAiUpstream([{ id: 'qwen3-4b' }, { id: 'qwen3-32b' }]);
    const from = upstream.server.requests.length;
    const error = await rejection(transport.send(helloRequest()));
    expect([error.code, error.status, error.retryable, error.body.error.type, error.message]).toStrictEqual([
      'MODEL_EINVAL',
      404,
      false,
      'not_found_error',
      `the upstream does not serve the model "claude-test"; ${upstream.server.url}/v1/models lists: qwen3-4b, qwen3-32b. ` +
        "Map the requested names to served ones with TPX_MODEL_MAP (--model-map), e.g. '*haiku*=qwen3-4b,*=qwen3-32b', " +
        'set TPX_MODEL to one of them, or ask for one by name',
    ]);
    expect(sentSince(from)).toStrictEqual([]);
  });

  it('sends a model the upstream lists as it is', async () => {
    const transport = tpxTransport({ inspectUpstream: true });
    upstream.answer = openAiUpstream([{ id: 'qwen3-4b' }, { id: 'claude-test' }]);
    const from = upstream.server.requests.length;
    const responses: ResponseInfo[] = [];
    await transport.send(helloRequest(), { onResponse: (info) => responses.push(info) });
    expect(sentSince(from)).toStrictEqual([{ model: 'claude-test', max_tokens: 64 }]);
    expect(responses).toStrictEqual([{ status: 200, headers: {}, attempts: 1 }]);
  });

  it('on the anthropic path, never checks the requested model against the upstream’s list', async () => {
    const transport = anthropicTransport({ inspectUpstream: true });
    upstream.answer = (record) =>
      record.method === 'GET'
        ? step.json({
            data: [
              { type: 'model', id: 'claude-other' },
              { type: 'model', id: 'claude-more' },
            ],
          })
        : step.json(textMessage());
    const from = upstream.server.requests.length;
    expect(await transport.send(helloRequest())).toStrictEqual(textMessage());
    expect(sentSince(from)).toStrictEqual([{ model: 'claude-test', max_tokens: 64 }]);
  });

  it('asks the upstream for its list with no retry: a failed look leaves the model as requested', async () => {
    const transport = tpxTransport({ inspectUpstream: true, maxRetries: 2, sleep: () => Promise.resolve() });
    let looks = 0;
    const listed = openAiUpstream([{ id: 'only-model' }]);
    upstream.answer = (record) => {
      if (record.method === 'GET' && record.url === '/v1/models' && ++looks === 1) {
        return step.reset('before-headers');
      }
      return listed(record);
    };
    const from = upstream.server.requests.length;
    await transport.send(helloRequest());
    expect(looks).toBe(1);
    expect(sentSince(from)).toStrictEqual([{ model: 'claude-test', max_tokens: 64 }]);
  });

  it('keeps the report of an explicit inspectUpstream call for the exchanges after it', async () => {
    const transport = tpxTransport({ inspectUpstream: true });
    upstream.answer = openAiUpstream([{ id: 'only-model' }]);
    const report = await transport.inspectUpstream!();
    expect(report).toStrictEqual({
      modelsUrl: `${upstream.server.url}/v1/models`,
      modelsStatus: 200,
      modelsContentType: 'application/json',
      models: [{ id: 'only-model' }],
    });
    const from = upstream.server.requests.length;
    await transport.send(helloRequest());
    expect(receivedSince(from).map(([method, url]) => [method, url])).toStrictEqual([
      ['POST', '/v1/chat/completions'],
    ]);
    expect(sentSince(from)).toStrictEqual([{ model: 'only-model', max_tokens: 64 }]);
  });

  it('names the model the caller asked for in the message_start of a mapped stream, and only there', async () => {
    const transport = anthropicTransport({ modelMap: 'claude-*=upstream-large' });
    const upstreamStart = {
      ...messageStartEvent(),
      message: { ...messageStartEvent().message, model: 'upstream-large' },
    };
    const upstreamEvents = [upstreamStart, ...textStreamEvents(['a']).slice(1)];
    upstream.answer = () => step.sse(anthropicSse(upstreamEvents));
    const from = upstream.server.requests.length;
    const responses: ResponseInfo[] = [];
    const events: unknown[] = [];
    for await (const event of transport.stream(helloRequest({ stream: true }), {
      onResponse: (info) => responses.push(info),
    })) {
      events.push(event);
    }
    expect(events).toStrictEqual(textStreamEvents(['a']));
    expect(sentSince(from)).toStrictEqual([{ model: 'upstream-large', max_tokens: 64 }]);
    expect(responses).toStrictEqual([
      { status: 200, headers: {}, attempts: 1, upstreamModel: 'upstream-large' },
    ]);
  });

  it('leaves the model the upstream names in an unmapped stream’s message_start', async () => {
    const transport = anthropicTransport({ maxOutputTokens: 32 });
    const upstreamStart = {
      ...messageStartEvent(),
      message: { ...messageStartEvent().message, model: 'named-by-upstream' },
    };
    const upstreamEvents = [upstreamStart, ...textStreamEvents(['a']).slice(1)];
    upstream.answer = () => step.sse(anthropicSse(upstreamEvents));
    const events: unknown[] = [];
    for await (const event of transport.stream(helloRequest({ stream: true }))) events.push(event);
    expect(events).toStrictEqual(upstreamEvents);
  });

  it('on the tpx path, names the requested model in a stream sent to the catch-all', async () => {
    const transport = tpxTransport({ tpxModel: 'served-catch-all' });
    upstream.answer = () =>
      step.sse(
        openAiSse([
          {
            id: 'c1',
            object: 'chat.completion.chunk',
            model: 'served-catch-all',
            choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }],
          },
          {
            id: 'c1',
            object: 'chat.completion.chunk',
            model: 'served-catch-all',
            choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
          },
        ]),
      );
    const from = upstream.server.requests.length;
    const starts: unknown[] = [];
    for await (const event of transport.stream(helloRequest({ stream: true }))) {
      if (event.type === 'message_start') starts.push(event.message.model);
    }
    expect(starts).toStrictEqual(['claude-test']);
    expect(sentSince(from)).toStrictEqual([{ model: 'served-catch-all', max_tokens: 64 }]);
  });
});

describe('the max_tokens a request is sent with', () => {
  it('lowers max_tokens to the configured cap, keeping the model, and reports the cap', async () => {
    const transport = anthropicTransport({ maxOutputTokens: 32 });
    upstream.answer = () => step.json(servedMessage('named-by-upstream'));
    const from = upstream.server.requests.length;
    const responses: ResponseInfo[] = [];
    const message = await transport.send(helloRequest(), { onResponse: (info) => responses.push(info) });
    expect(sentSince(from)).toStrictEqual([{ model: 'claude-test', max_tokens: 32 }]);
    expect(message).toStrictEqual(servedMessage('named-by-upstream'));
    expect(responses).toStrictEqual([{ status: 200, headers: {}, attempts: 1, upstreamMaxTokens: 32 }]);
  });

  it('reports both the mapped model and the lowered max_tokens', async () => {
    const transport = anthropicTransport({ modelMap: '*=upstream-large', maxOutputTokens: 16 });
    upstream.answer = () => step.json(textMessage());
    const responses: ResponseInfo[] = [];
    await transport.send(helloRequest(), { onResponse: (info) => responses.push(info) });
    expect(responses).toStrictEqual([
      { status: 200, headers: {}, attempts: 1, upstreamModel: 'upstream-large', upstreamMaxTokens: 16 },
    ]);
  });

  it('caps max_tokens to the listed model’s own context window, less the input and a margin', async () => {
    const transport = tpxTransport({ inspectUpstream: true });
    upstream.answer = openAiUpstream([{ id: 'claude-test', max_model_len: 1_000 }], 50_000);
    const from = upstream.server.requests.length;
    const responses: ResponseInfo[] = [];
    await transport.send(helloRequest({ max_tokens: 5_000 }), { onResponse: (info) => responses.push(info) });
    // 1,000 tokens, less a margin of 64 and the 10 tokens estimated for the one-word request.
    expect(sentSince(from)).toStrictEqual([{ model: 'claude-test', max_tokens: 926 }]);
    expect(responses).toStrictEqual([{ status: 200, headers: {}, attempts: 1, upstreamMaxTokens: 926 }]);
  });

  it('reads the window of the model the request goes to, not of another listed model', async () => {
    const transport = tpxTransport({ inspectUpstream: true });
    upstream.answer = openAiUpstream(
      [
        { id: 'qwen3-4b', max_model_len: 500 },
        { id: 'claude-test', max_model_len: 2_000 },
      ],
      50_000,
    );
    const from = upstream.server.requests.length;
    await transport.send(helloRequest({ max_tokens: 5_000 }));
    // 2,000 tokens, less a margin of 100 (5 %) and the 10 input tokens.
    expect(sentSince(from)).toStrictEqual([{ model: 'claude-test', max_tokens: 1_890 }]);
  });

  it('uses the server-wide window from /props when the list states none for the model', async () => {
    const transport = tpxTransport({ inspectUpstream: true });
    upstream.answer = openAiUpstream([{ id: 'claude-test' }], 1_000);
    const from = upstream.server.requests.length;
    await transport.send(helloRequest({ max_tokens: 5_000 }));
    expect(sentSince(from)).toStrictEqual([{ model: 'claude-test', max_tokens: 926 }]);
  });

  it('sends max_tokens as asked when it fits in the window', async () => {
    const transport = tpxTransport({ inspectUpstream: true });
    upstream.answer = openAiUpstream([{ id: 'claude-test', max_model_len: 1_000 }]);
    const from = upstream.server.requests.length;
    const responses: ResponseInfo[] = [];
    await transport.send(helloRequest(), { onResponse: (info) => responses.push(info) });
    expect(sentSince(from)).toStrictEqual([{ model: 'claude-test', max_tokens: 64 }]);
    expect(responses).toStrictEqual([{ status: 200, headers: {}, attempts: 1 }]);
  });

  it('refuses a prompt that leaves no room in the window with a 400, before sending it', async () => {
    const transport = tpxTransport({ inspectUpstream: true });
    upstream.answer = openAiUpstream([{ id: 'claude-test', max_model_len: 64 }]);
    const from = upstream.server.requests.length;
    const error = await rejection(transport.send(helloRequest()));
    expect([error.code, error.status, error.retryable, error.body.error.type]).toStrictEqual([
      'MODEL_EINVAL',
      400,
      false,
      'invalid_request_error',
    ]);
    expect(error.message).toMatch(
      /^prompt is too long: about \d+ input tokens, and the upstream's context window is 64 tokens \(with a margin of 64\)/,
    );
    expect(sentSince(from)).toStrictEqual([]);
  });

  it('sets no window when the upstream could not be inspected', async () => {
    const transport = tpxTransport({ inspectUpstream: true });
    upstream.answer = (record) =>
      record.method === 'GET'
        ? step.json({ detail: 'Not Found' }, { status: 404 })
        : step.json(completion('x'));
    const from = upstream.server.requests.length;
    await transport.send(helloRequest({ max_tokens: 100_000 }));
    expect(sentSince(from)).toStrictEqual([{ model: 'claude-test', max_tokens: 100_000 }]);
  });
});

describe('the caller’s own bytes', () => {
  /** The request as a client sent it: the same request, in its own spacing and key order. */
  const rawBody =
    '{ "max_tokens": 64, "model": "claude-test",  "messages": [{"role": "user", "content": "Hello"}] }';

  it('are sent as they are when shaping changes nothing', async () => {
    const transport = anthropicTransport({ maxOutputTokens: 4_096, modelMap: '*haiku*=upstream-small' });
    upstream.answer = () => step.json(textMessage());
    const from = upstream.server.requests.length;
    const responses: ResponseInfo[] = [];
    await transport.send(helloRequest(), { rawBody, onResponse: (info) => responses.push(info) });
    expect(upstream.server.requests.slice(from).map((record) => record.bodyText)).toStrictEqual([rawBody]);
    expect(responses).toStrictEqual([{ status: 200, headers: {}, attempts: 1 }]);
  });

  it('are not sent once the model was mapped', async () => {
    const transport = anthropicTransport({ modelMap: '*=upstream-large' });
    upstream.answer = () => step.json(textMessage());
    const from = upstream.server.requests.length;
    await transport.send(helloRequest(), { rawBody });
    expect(upstream.server.requests.slice(from).map((record) => record.bodyText)).not.toStrictEqual([
      rawBody,
    ]);
    expect(sentSince(from)).toStrictEqual([{ model: 'upstream-large', max_tokens: 64 }]);
  });

  it('are not sent once max_tokens was lowered', async () => {
    const transport = anthropicTransport({ maxOutputTokens: 8 });
    upstream.answer = () => step.json(textMessage());
    const from = upstream.server.requests.length;
    await transport.send(helloRequest(), { rawBody });
    expect(sentSince(from)).toStrictEqual([{ model: 'claude-test', max_tokens: 8 }]);
  });

  it('a shaped exchange without onResponse still succeeds', async () => {
    const transport = anthropicTransport({ maxOutputTokens: 8 });
    upstream.answer = () => step.json(textMessage());
    expect(await transport.send(helloRequest())).toStrictEqual(textMessage());
  });
});

describe('the policy a transport states', () => {
  it('states no catch-all, no cap and no upstream list when none is configured', async () => {
    const transport = anthropicTransport();
    expect(transport.upstreamPolicy).toStrictEqual({
      modelRules: [],
      usesUpstreamModelList: false,
      capsToContextWindow: false,
      resolveModel: expect.any(Function) as unknown,
      baseUrl: upstream.server.url,
    });
    expect(await transport.upstreamPolicy!.resolveModel('claude-test')).toStrictEqual({
      model: 'claude-test',
      reason: 'as requested (the upstream lists no models)',
    });
  });

  it('states every map rule, the catch-all and the configured cap, and resolves by the rules first', async () => {
    const transport = tpxTransport({
      modelMap: 'claude-*=served-large,haiku=served-small',
      tpxModel: 'served-catch-all',
      maxOutputTokens: 96,
    });
    expect(transport.upstreamPolicy).toStrictEqual({
      modelRules: [
        { pattern: 'claude-*', model: 'served-large' },
        { pattern: 'haiku', model: 'served-small' },
      ],
      catchAllModel: 'served-catch-all',
      usesUpstreamModelList: false,
      maxTokens: 96,
      capsToContextWindow: false,
      resolveModel: expect.any(Function) as unknown,
      baseUrl: `${upstream.server.url}/v1`,
    });
    expect((await transport.upstreamPolicy!.resolveModel('claude-test')).model).toBe('served-large');
    expect((await transport.upstreamPolicy!.resolveModel('other')).model).toBe('served-catch-all');
  });

  it('on the anthropic path with inspectUpstream, caps to the window but uses no model list', async () => {
    const transport = anthropicTransport({ inspectUpstream: true });
    expect(transport.upstreamPolicy).toMatchObject({
      usesUpstreamModelList: false,
      capsToContextWindow: true,
    });
  });

  it('on the tpx path, resolves a name against the upstream’s list as an exchange would', async () => {
    const transport = tpxTransport({ inspectUpstream: true });
    upstream.answer = openAiUpstream([{ id: 'only-model' }]);
    expect(transport.upstreamPolicy).toMatchObject({
      usesUpstreamModelList: true,
      capsToContextWindow: true,
    });
    expect(await transport.upstreamPolicy!.resolveModel('claude-test')).toStrictEqual({
      model: 'only-model',
      reason: "the upstream's only model",
    });
  });
});
