/**
 * The native provider called directly (one attempt, no transport around it) against a scripted
 * Messages server on loopback: what it sends, and how it reads what comes back.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MessagesRequest, MessageStreamEvent } from '../../src/protocol/messages.js';
import { createAnthropicProvider } from '../../src/providers/anthropic.js';
import type { ExchangeOptions } from '../../src/providers/exchange-types.js';
import { startScriptedServer, step, type ScriptedServer, type Step } from '../helpers/scripted-server.js';
import { rejectionOf, testAttempt, type TestAttempt } from './attempt-context.js';
import { ERROR_BODY_LIMIT } from '../../src/providers/upstream-answer.js';
import { rawJsonOf } from '../../src/providers/raw-json.js';

let server: ScriptedServer | undefined;
let attempt: TestAttempt | undefined;
afterEach(async () => {
  await attempt?.close();
  await server?.close();
  attempt = undefined;
  server = undefined;
});

const REQUEST: MessagesRequest = {
  model: 'claude-test',
  max_tokens: 16,
  messages: [{ role: 'user', content: 'Hi' }],
};

const MESSAGE = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-test',
  content: [{ type: 'text', text: 'Hello' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 3, output_tokens: 1 },
};

async function provider(steps: Step[]) {
  server = await startScriptedServer(steps);
  attempt = testAttempt('anthropic');
  return createAnthropicProvider({ apiKey: 'sk-ant-direct-test', baseUrl: server.url });
}

function frames(...events: object[]): string[] {
  return events.map(
    (event) => `event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`,
  );
}

const START = { type: 'message_start', message: { ...MESSAGE, content: [], stop_reason: null } };
const DELTA = (stop_reason = 'end_turn') => ({
  type: 'message_delta',
  delta: { stop_reason, stop_sequence: null },
  usage: { output_tokens: 1 },
});
const STOP = { type: 'message_stop' };

async function collect(stream: AsyncGenerator<MessageStreamEvent[]>): Promise<MessageStreamEvent[]> {
  const events: MessageStreamEvent[] = [];
  for await (const batch of stream) events.push(...batch);
  return events;
}

async function streamOf(steps: Step[], options: ExchangeOptions = {}) {
  const native = await provider(steps);
  return collect(native.stream(REQUEST, options, attempt!.context, attempt!.report));
}

describe('anthropic provider: requests', () => {
  it('refuses a caller header with a line break before sending anything', async () => {
    const native = await provider([]);
    const error = await rejectionOf(
      native.send(
        REQUEST,
        { headers: { 'Anthropic-Beta': 'a\r\nx-injected: 1' } },
        attempt!.context,
        attempt!.report,
      ),
    );
    expect(error).toMatchObject({
      code: 'MODEL_EINVAL',
      message: 'the anthropic-beta header contains a line break or NUL character',
    });
    expect(server!.requests).toHaveLength(0);
  });

  it('joins a repeated caller header with commas, and ignores a blank one', async () => {
    const native = await provider([step.json(MESSAGE), step.json(MESSAGE)]);
    await native.send(
      REQUEST,
      { headers: { 'anthropic-beta': ['one', 'two'], 'anthropic-version': '  ' } },
      attempt!.context,
      attempt!.report,
    );
    expect(server!.requests[0]!.headers['anthropic-beta']).toBe('one,two');
    expect(server!.requests[0]!.headers['anthropic-version']).toBe('2023-06-01');
    await native.send(
      REQUEST,
      { headers: { 'anthropic-beta': undefined } },
      attempt!.context,
      attempt!.report,
    );
    expect(server!.requests[1]!.headers['anthropic-beta']).toBeUndefined();
  });

  it('refuses a query with whitespace or "#", and drops a leading "?"', async () => {
    const native = await provider([step.json(MESSAGE)]);
    for (const query of ['a=b c', 'a=b#frag', 'a=\tb']) {
      const error = await rejectionOf(native.send(REQUEST, { query }, attempt!.context, attempt!.report));
      expect(error).toMatchObject({
        code: 'MODEL_EINVAL',
        message: 'the query string contains whitespace or "#"',
      });
    }
    await native.send(REQUEST, { query: '?beta=true' }, attempt!.context, attempt!.report);
    expect(server!.requests.map((request) => request.url)).toStrictEqual(['/v1/messages?beta=true']);
  });

  it('sends an empty query as none', async () => {
    const native = await provider([step.json(MESSAGE)]);
    await native.send(REQUEST, { query: '' }, attempt!.context, attempt!.report);
    expect(server!.requests[0]!.url).toBe('/v1/messages');
  });

  it('re-serialises with the right stream flag when the raw body says otherwise', async () => {
    const native = await provider([step.json(MESSAGE), step.sse(frames(START, DELTA(), STOP))]);
    const rawBody = '{"model":"raw","stream":true}';
    await native.send({ ...REQUEST, stream: true }, { rawBody }, attempt!.context, attempt!.report);
    expect(server!.requests[0]!.json).toStrictEqual({ ...REQUEST, stream: false });
    await collect(native.stream(REQUEST, { rawBody: '{"model":"raw"}' }, attempt!.context, attempt!.report));
    expect(server!.requests[1]!.json).toStrictEqual({ ...REQUEST, stream: true });
  });

  it('reports the status and the pass-on headers of each answer', async () => {
    const native = await provider([
      step.json(MESSAGE, { headers: { 'request-id': 'req_9', 'x-other': 'no' } }),
    ]);
    await native.send(REQUEST, {}, attempt!.context, attempt!.report);
    expect(attempt!.reports).toStrictEqual([{ status: 200, headers: { 'request-id': 'req_9' } }]);
  });
});

describe('anthropic provider: send', () => {
  it('reads an error body under a 200 as the error its type stands for', async () => {
    const native = await provider([
      step.json({ type: 'error', error: { type: 'overloaded_error', message: 'busy' } }),
      step.json({ type: 'error', error: { type: 'invalid_request_error' } }),
    ]);
    expect(await rejectionOf(native.send(REQUEST, {}, attempt!.context, attempt!.report))).toMatchObject({
      code: 'MODEL_EHTTP',
      status: 529,
      retryable: true,
      provider: 'anthropic',
      message: 'the anthropic endpoint answered 200 with an error: overloaded_error: busy',
    });
    const second = await rejectionOf(native.send(REQUEST, {}, attempt!.context, attempt!.report));
    expect(second).toMatchObject({
      status: 400,
      retryable: false,
      message: 'the anthropic endpoint answered 200 with an error: invalid_request_error: ',
    });
    expect((second as { body: { error: { type: string } } }).body.error.type).toBe('invalid_request_error');
  });

  it('does not take an error-typed body without a usable error object for an error', async () => {
    for (const body of [
      { type: 'error', error: null },
      { type: 'error', error: { type: 5, message: 'x' } },
      { type: 'error' },
    ]) {
      const native = await provider([step.json(body)]);
      const error = await rejectionOf(native.send(REQUEST, {}, attempt!.context, attempt!.report));
      expect(error).toMatchObject({ code: 'MODEL_EPROTO' });
      expect((error as Error).message).toMatch(/^the anthropic response is not a valid message: /);
      await attempt!.close();
      await server!.close();
    }
  });

  it('refuses a message that uses one tool_use id twice', async () => {
    const tool = (name: string) => ({ type: 'tool_use', id: 'toolu_same', name, input: {} });
    const native = await provider([
      step.json({
        ...MESSAGE,
        content: [tool('a'), { type: 'text', text: 'x' }, tool('b')],
        stop_reason: 'tool_use',
      }),
    ]);
    expect(await rejectionOf(native.send(REQUEST, {}, attempt!.context, attempt!.report))).toMatchObject({
      code: 'MODEL_EPROTO',
      provider: 'anthropic',
      message:
        'the anthropic answer uses the tool_use id "toolu_same" for two calls; tool_use ids must be unique',
    });
  });

  it('accepts distinct tool_use ids', async () => {
    const native = await provider([
      step.json({
        ...MESSAGE,
        content: [
          { type: 'tool_use', id: 'toolu_1', name: 'a', input: {} },
          { type: 'tool_use', id: 'toolu_2', name: 'a', input: {} },
        ],
        stop_reason: 'tool_use',
      }),
    ]);
    const message = await native.send(REQUEST, {}, attempt!.context, attempt!.report);
    expect(message.content).toHaveLength(2);
  });
});

describe('anthropic provider: stream', () => {
  it('names the content type and the start of the body of a stream answered with something else', async () => {
    const error = await rejectionOf(
      streamOf([step.text(200, 'x'.repeat(200), { 'content-type': 'text/plain' })]),
    );
    expect(error).toMatchObject({
      code: 'MODEL_EPROTO',
      provider: 'anthropic',
      message: `the anthropic endpoint answered a stream request with text/plain, not text/event-stream: "${'x'.repeat(120)}"`,
    });
    const untyped = await rejectionOf(streamOf([step.text(200, '', {})]));
    expect((untyped as Error).message).toBe(
      'the anthropic endpoint answered a stream request with no content type, not text/event-stream: ""',
    );
  });

  it('raises an error event as the status its type stands for', async () => {
    const error = await rejectionOf(
      streamOf([
        step.sse([
          `event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}\n\n`,
        ]),
      ]),
    );
    expect(error).toMatchObject({
      code: 'MODEL_EHTTP',
      status: 429,
      retryable: true,
      message: 'the anthropic stream failed: rate_limit_error: slow down',
    });
  });

  it('stops reading at message_stop, ignoring anything after it', async () => {
    const events = await streamOf([step.sse([...frames(START, DELTA(), STOP), 'data: not json\n\n'])]);
    expect(events.map((event) => event.type)).toStrictEqual([
      'message_start',
      'message_delta',
      'message_stop',
    ]);
  });

  it('skips blank data, and says the stream ended early without message_stop as not retryable', async () => {
    const error = await rejectionOf(streamOf([step.sse(['data: \n\n', ...frames(START)])]));
    expect(error).toMatchObject({
      code: 'MODEL_EPROTO',
      provider: 'anthropic',
      retryable: false,
      message: 'the anthropic stream ended before message_stop',
    });
  });

  it('refuses a stream that starts two tool calls with one id', async () => {
    const tool = (index: number) => ({
      type: 'content_block_start',
      index,
      content_block: { type: 'tool_use', id: 'toolu_dup', name: 'a', input: {} },
    });
    const error = await rejectionOf(
      streamOf([step.sse(frames(START, tool(0), { type: 'content_block_stop', index: 0 }, tool(1)))]),
    );
    expect(error).toMatchObject({
      code: 'MODEL_EPROTO',
      message:
        'the anthropic answer uses the tool_use id "toolu_dup" for two calls; tool_use ids must be unique',
    });
  });

  it('reports a grammar violation naming the broken order', async () => {
    const error = await rejectionOf(streamOf([step.sse(frames(START, START))]));
    expect(error).toMatchObject({ code: 'MODEL_EPROTO', provider: 'anthropic' });
    expect((error as Error).message).toMatch(/^the anthropic stream broke the event order: ./);
  });

  it('gives a tool_use block that arrives without input an empty one, and closes a block left open', async () => {
    const events = await streamOf([
      step.sse(
        frames(
          START,
          { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
          {
            type: 'content_block_start',
            index: 1,
            content_block: { type: 'tool_use', id: 'toolu_1', name: 'a' },
          },
          {
            type: 'content_block_delta',
            index: 1,
            delta: { type: 'input_json_delta', partial_json: '{"x":' },
          },
          { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '1}' } },
          { type: 'content_block_stop', index: 0 },
          { type: 'content_block_stop', index: 1 },
          DELTA('tool_use'),
          STOP,
        ),
      ),
    ]);
    expect(events).toStrictEqual([
      START,
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'toolu_1', name: 'a', input: {} },
      },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"x":' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '1}' } },
      { type: 'content_block_stop', index: 1 },
      DELTA('tool_use'),
      STOP,
    ]);
  });

  const cutTool = (stop: string, fragment: string) =>
    streamOf([
      step.sse(
        frames(
          START,
          {
            type: 'content_block_start',
            index: 0,
            content_block: { type: 'tool_use', id: 'toolu_1', name: 'a', input: {} },
          },
          {
            type: 'content_block_delta',
            index: 0,
            delta: { type: 'input_json_delta', partial_json: fragment },
          },
          { type: 'content_block_stop', index: 0 },
          DELTA(stop),
          STOP,
        ),
      ),
    ]);

  it('completes a tool input cut by max_tokens so that the message accumulates', async () => {
    const events = await cutTool('max_tokens', '{"city":"Par');
    expect(events[3]).toStrictEqual({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json: '"}' },
    });
    expect(events.at(-1)).toStrictEqual(STOP);
  });

  it('refuses a tool input that is not a JSON object when the stream did not end at max_tokens', async () => {
    const cut = await rejectionOf(cutTool('tool_use', '{"city":"Par'));
    expect(cut).toMatchObject({
      code: 'MODEL_EPROTO',
      message:
        'the anthropic stream sent tool input for block 0 that is not a JSON object: "{\\"city\\":\\"Par"',
    });
    const array = await rejectionOf(cutTool('end_turn', '[1]'));
    expect((array as Error).message).toBe(
      'the anthropic stream sent tool input for block 0 that is not a JSON object: "[1]"',
    );
    const long = `{"a":"${'y'.repeat(150)}`;
    const shortened = await rejectionOf(cutTool('end_turn', long));
    expect((shortened as Error).message).toBe(
      `the anthropic stream sent tool input for block 0 that is not a JSON object: ${JSON.stringify(`${long.slice(0, 100)}…`)}`,
    );
  });

  it('accepts a tool input of only whitespace as empty', async () => {
    const events = await cutTool('tool_use', '  ');
    expect(events.at(-1)).toStrictEqual(STOP);
    expect(events).toHaveLength(6);
  });
});

describe('anthropic provider: count_tokens, models, inspect', () => {
  it('counts tokens at /v1/messages/count_tokens with the raw body, and refuses an answer without a number', async () => {
    const native = await provider([step.json({ input_tokens: 7 }), step.json({ input_tokens: '7' })]);
    const count = await native.countTokens!(
      REQUEST,
      { rawBody: '{"raw":1}', query: 'beta=true' },
      attempt!.context,
      attempt!.report,
    );
    expect(count).toStrictEqual({ input_tokens: 7 });
    expect(server!.requests[0]!.url).toBe('/v1/messages/count_tokens?beta=true');
    expect(server!.requests[0]!.bodyText).toBe('{"raw":1}');
    expect(
      await rejectionOf(native.countTokens!(REQUEST, {}, attempt!.context, attempt!.report)),
    ).toMatchObject({
      code: 'MODEL_EPROTO',
      message: 'the anthropic count_tokens response has no numeric input_tokens',
    });
    expect(server!.requests[1]!.json).toStrictEqual(REQUEST);
  });

  it('passes a count_tokens error status on unexplained', async () => {
    const native = await provider([
      step.json({ type: 'error', error: { type: 'not_found_error', message: 'nope' } }, { status: 404 }),
    ]);
    const error = await rejectionOf(native.countTokens!(REQUEST, {}, attempt!.context, attempt!.report));
    expect(error).toMatchObject({ code: 'MODEL_EHTTP', status: 404 });
    expect((error as Error).message).not.toContain('TPX_MODEL_MAP');
  });

  it('lists models with a GET without content type, mapping an OpenAI-shaped list', async () => {
    const native = await provider([
      step.json({
        data: [{ type: 'model', id: 'claude-a', display_name: 'A', created_at: '2025-01-01T00:00:00Z' }],
        has_more: false,
      }),
      step.json({ object: 'list', data: [{ id: 'local', object: 'model', created: 0 }] }),
      step.json({ models: [] }),
    ]);
    const anthropicList = await native.listModels!({}, attempt!.context, attempt!.report);
    expect(anthropicList).toStrictEqual({
      data: [{ type: 'model', id: 'claude-a', display_name: 'A', created_at: '2025-01-01T00:00:00Z' }],
      has_more: false,
    });
    expect(server!.requests[0]).toMatchObject({ method: 'GET', url: '/v1/models' });
    expect(server!.requests[0]!.headers['content-type']).toBeUndefined();
    expect(server!.requests[0]!.headers['x-api-key']).toBe('sk-ant-direct-test');
    const mapped = (await native.listModels!({}, attempt!.context, attempt!.report)) as {
      data: { id: string; type: string }[];
    };
    expect(mapped.data.map((entry) => [entry.type, entry.id])).toStrictEqual([['model', 'local']]);
    expect(await rejectionOf(native.listModels!({}, attempt!.context, attempt!.report))).toMatchObject({
      code: 'MODEL_EPROTO',
      message: 'the anthropic models response has no data array',
    });
  });

  it('inspects the model list, failing on a refused key but reporting other statuses', async () => {
    const native = await provider([
      step.json(
        { type: 'error', error: { type: 'authentication_error', message: 'bad key' } },
        { status: 401 },
      ),
      step.json({}, { status: 403 }),
    ]);
    expect(await rejectionOf(native.inspect!({}, attempt!.context, attempt!.report))).toMatchObject({
      code: 'MODEL_EAUTH',
      status: 401,
    });
    const report = await native.inspect!({ query: 'ignored=1' }, attempt!.context, attempt!.report);
    expect(report).toMatchObject({
      modelsUrl: `${server!.url}/v1/models`,
      modelsStatus: 403,
      problem: 'answered 403',
    });
    expect(server!.requests[1]!.headers['content-type']).toBeUndefined();
  });
});

describe('anthropic provider: what goes out', () => {
  it('sends JSON with the key and the default version, asking for JSON or events, and no beta header unasked', async () => {
    const native = await provider([step.json(MESSAGE), step.sse(frames(START, DELTA(), STOP))]);
    await native.send(REQUEST, {}, attempt!.context, attempt!.report);
    await collect(native.stream(REQUEST, {}, attempt!.context, attempt!.report));
    const [sent, streamed] = server!.requests;
    expect(sent!.headers['content-type']).toBe('application/json');
    expect(sent!.headers['accept']).toBe('application/json');
    expect(sent!.headers['x-api-key']).toBe('sk-ant-direct-test');
    expect(sent!.headers['anthropic-version']).toBe('2023-06-01');
    expect('anthropic-beta' in sent!.headers).toBe(false);
    expect(streamed!.headers['content-type']).toBe('application/json');
    expect(streamed!.headers['accept']).toBe('text/event-stream');
  });

  it("passes the caller's anthropic-version on, whatever the case of its name", async () => {
    const native = await provider([step.json(MESSAGE)]);
    await native.send(
      REQUEST,
      { headers: { 'Anthropic-Version': '2024-10-22' } },
      attempt!.context,
      attempt!.report,
    );
    expect(server!.requests[0]!.headers['anthropic-version']).toBe('2024-10-22');
  });

  it('keeps a "?" inside the query, dropping only a leading one', async () => {
    const native = await provider([step.json(MESSAGE), step.json(MESSAGE)]);
    await native.send(REQUEST, { query: '?q=why?&beta=true' }, attempt!.context, attempt!.report);
    await native.send(REQUEST, { query: 'q=how?' }, attempt!.context, attempt!.report);
    expect(server!.requests.map((request) => request.url)).toStrictEqual([
      '/v1/messages?q=why?&beta=true',
      '/v1/messages?q=how?',
    ]);
  });

  it('sends the raw body byte for byte when its stream flag is the one about to be used', async () => {
    const native = await provider([step.json(MESSAGE), step.sse(frames(START, DELTA(), STOP))]);
    const rawBody = '{ "model" : "claude-test", "max_tokens": 16, "messages": [] }';
    await native.send(REQUEST, { rawBody }, attempt!.context, attempt!.report);
    expect(server!.requests[0]!.bodyText).toBe(rawBody);
    const streamingRaw = '{"stream":true,  "model":"claude-test"}';
    await collect(
      native.stream(
        { ...REQUEST, stream: true },
        { rawBody: streamingRaw },
        attempt!.context,
        attempt!.report,
      ),
    );
    expect(server!.requests[1]!.bodyText).toBe(streamingRaw);
  });

  it('sends a request without a stream flag as it is, adding none', async () => {
    const native = await provider([step.json(MESSAGE)]);
    await native.send(REQUEST, {}, attempt!.context, attempt!.report);
    expect(server!.requests[0]!.bodyText).toBe(JSON.stringify(REQUEST));
  });
});

describe('anthropic provider: error statuses', () => {
  it('explains a 404 about the model of a message with the model it sent and ANTHROPIC_BASE_URL for the route', async () => {
    const native = await provider([
      step.json(
        { type: 'error', error: { type: 'not_found_error', message: 'model: claude-test' } },
        { status: 404 },
      ),
      step.text(404, 'Not Found', { 'content-type': 'text/plain' }),
    ]);
    const model = await rejectionOf(native.send(REQUEST, {}, attempt!.context, attempt!.report));
    expect(model).toMatchObject({ code: 'MODEL_EHTTP', status: 404, provider: 'anthropic' });
    expect((model as Error).message).toMatch(/^the upstream does not serve the model "claude-test" \(/);
    const route = await rejectionOf(native.send(REQUEST, {}, attempt!.context, attempt!.report));
    expect((route as Error).message).toBe(
      `the upstream has no endpoint at POST ${server!.url}/v1/messages (404: upstream answered 404 Not Found with a ` +
        `text/plain body, not JSON — is the base URL right? (Not Found)); check ANTHROPIC_BASE_URL (now ${server!.url}) and the port`,
    );
  });

  it('explains a 404 of a stream the same way', async () => {
    const native = await provider([
      step.json(
        { type: 'error', error: { type: 'not_found_error', message: 'model: claude-test' } },
        { status: 404 },
      ),
    ]);
    const error = await rejectionOf(collect(native.stream(REQUEST, {}, attempt!.context, attempt!.report)));
    expect(error).toMatchObject({ code: 'MODEL_EHTTP', status: 404, provider: 'anthropic' });
    expect((error as Error).message).toMatch(/^the upstream does not serve the model "claude-test" \(/);
  });

  it('names the provider of a 200 body that is not JSON', async () => {
    const native = await provider([step.text(200, 'not json', { 'content-type': 'application/json' })]);
    expect(await rejectionOf(native.send(REQUEST, {}, attempt!.context, attempt!.report))).toMatchObject({
      code: 'MODEL_EPROTO',
      provider: 'anthropic',
    });
  });
});

describe('anthropic provider: reading answers', () => {
  it('refuses a 200 body of JSON null as not a message', async () => {
    const native = await provider([step.text(200, 'null', { 'content-type': 'application/json' })]);
    const error = await rejectionOf(native.send(REQUEST, {}, attempt!.context, attempt!.report));
    expect(error).toMatchObject({ code: 'MODEL_EPROTO', provider: 'anthropic' });
    expect((error as Error).message).toMatch(/^the anthropic response is not a valid message: /);
  });

  it('reads a message that also carries an error field as the message: only an error-typed body is an error', async () => {
    const native = await provider([
      step.json({ ...MESSAGE, error: { type: 'overloaded_error', message: 'stale' } }),
    ]);
    const message = await native.send(REQUEST, {}, attempt!.context, attempt!.report);
    expect(message.content).toStrictEqual([{ type: 'text', text: 'Hello' }]);
  });

  it('accepts a message of several text blocks, which have no tool_use ids to compare', async () => {
    const native = await provider([
      step.json({
        ...MESSAGE,
        content: [
          { type: 'text', text: 'One' },
          { type: 'text', text: 'Two' },
        ],
      }),
    ]);
    const message = await native.send(REQUEST, {}, attempt!.context, attempt!.report);
    expect(message.content).toStrictEqual([
      { type: 'text', text: 'One' },
      { type: 'text', text: 'Two' },
    ]);
  });

  it('gives the empty list for an OpenAI-shaped model list with no usable ids', async () => {
    const native = await provider([step.json({ object: 'list', data: [{ object: 'model' }] })]);
    expect(await native.listModels!({}, attempt!.context, attempt!.report)).toStrictEqual({
      data: [],
      has_more: false,
      first_id: null,
      last_id: null,
    });
  });

  it('names no body when a stream answered with something else has a body too large to quote', async () => {
    const error = await rejectionOf(
      streamOf([step.text(200, 'z'.repeat(ERROR_BODY_LIMIT + 10), { 'content-type': 'text/plain' })]),
    );
    expect((error as Error).message).toBe(
      'the anthropic endpoint answered a stream request with text/plain, not text/event-stream: ""',
    );
  });

  it('skips an event type it does not know, delivering the rest unchanged', async () => {
    const events = await streamOf([
      step.sse(frames(START, { type: 'future_event', detail: 1 }, DELTA(), STOP)),
    ]);
    expect(events).toStrictEqual([START, DELTA(), STOP]);
  });

  it('refuses a known event of the wrong shape, naming the provider', async () => {
    const error = await rejectionOf(
      streamOf([step.sse(frames(START, { type: 'content_block_delta', index: 0 }))]),
    );
    expect(error).toMatchObject({ code: 'MODEL_EPROTO', provider: 'anthropic' });
    expect((error as Error).message).toMatch(/^the anthropic stream sent an invalid event: ./);
  });

  it('refuses an event whose data is JSON null, or a block start whose block is null', async () => {
    for (const data of ['null', '{"type":"content_block_start","index":0,"content_block":null}']) {
      const error = await rejectionOf(
        streamOf([step.sse([...frames(START), `event: x\ndata: ${data}\n\n`])]),
      );
      expect(error).toMatchObject({ code: 'MODEL_EPROTO', provider: 'anthropic' });
      expect((error as Error).message).toMatch(/^the anthropic stream sent an invalid event: ./);
      await attempt!.close();
      await server!.close();
    }
  });
});

describe('anthropic provider: answers in detail', () => {
  it('is named anthropic', () => {
    expect(createAnthropicProvider({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9' }).name).toBe('anthropic');
  });

  it('reads a 299 answer as a success', async () => {
    const native = await provider([
      step.json(MESSAGE, { status: 299 }),
      step.sse(frames(START, DELTA(), STOP), { status: 299 }),
    ]);
    expect((await native.send(REQUEST, {}, attempt!.context, attempt!.report)).content).toStrictEqual(
      MESSAGE.content,
    );
    expect(await collect(native.stream(REQUEST, {}, attempt!.context, attempt!.report))).toStrictEqual([
      START,
      DELTA(),
      STOP,
    ]);
  });

  it('keeps the bytes a validated message came in, for a relay to send on as they are', async () => {
    const text = `{ "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
      "content": [{"type": "text", "text": "Hello"}], "stop_reason": "end_turn", "stop_sequence": null,
      "usage": {"input_tokens": 3, "output_tokens": 1} }`;
    const native = await provider([step.text(200, text, { 'content-type': 'application/json' })]);
    const message = await native.send(REQUEST, {}, attempt!.context, attempt!.report);
    expect(rawJsonOf(message)).toBe(text);
  });

  it('says which answer was not JSON', async () => {
    const native = await provider([step.text(200, '{oops', { 'content-type': 'application/json' })]);
    expect(await rejectionOf(native.send(REQUEST, {}, attempt!.context, attempt!.report))).toMatchObject({
      code: 'MODEL_EPROTO',
      provider: 'anthropic',
      message: 'the anthropic response is not valid JSON: "{oops"',
    });
  });

  it('maps a model list of mixed shapes entry by entry, skipping entries that are not objects', async () => {
    const native = await provider([
      step.json({
        data: [null, { type: 'model', id: 'claude-a' }, { object: 'model', id: 'local', created: 0 }],
      }),
    ]);
    const listed = (await native.listModels!({}, attempt!.context, attempt!.report)) as {
      data: { id: string; type: string }[];
    };
    expect(listed.data.map((entry) => [entry.type, entry.id])).toStrictEqual([
      ['model', 'claude-a'],
      ['model', 'local'],
    ]);
  });

  it('quotes a broken tool input of exactly 100 characters whole, naming the provider', async () => {
    const fragment = `{"a":"${'w'.repeat(94)}`;
    expect(fragment).toHaveLength(100);
    const error = await rejectionOf(
      streamOf([
        step.sse(
          frames(
            START,
            {
              type: 'content_block_start',
              index: 0,
              content_block: { type: 'tool_use', id: 'toolu_1', name: 'a', input: {} },
            },
            {
              type: 'content_block_delta',
              index: 0,
              delta: { type: 'input_json_delta', partial_json: fragment },
            },
            { type: 'content_block_stop', index: 0 },
            DELTA('end_turn'),
            STOP,
          ),
        ),
      ]),
    );
    expect(error).toMatchObject({
      code: 'MODEL_EPROTO',
      provider: 'anthropic',
      message: `the anthropic stream sent tool input for block 0 that is not a JSON object: ${JSON.stringify(fragment)}`,
    });
  });
});

describe('anthropic provider: stream rules in detail', () => {
  const textStart = (index: number) => ({
    type: 'content_block_start',
    index,
    content_block: { type: 'text', text: '' },
  });
  const textDelta = (index: number, text: string) => ({
    type: 'content_block_delta',
    index,
    delta: { type: 'text_delta', text },
  });
  const stop = (index: number) => ({ type: 'content_block_stop', index });
  const toolStart = (index: number, id: string) => ({
    type: 'content_block_start',
    index,
    content_block: { type: 'tool_use', id, name: 'a', input: {} },
  });
  const toolDelta = (index: number, partial_json: string) => ({
    type: 'content_block_delta',
    index,
    delta: { type: 'input_json_delta', partial_json },
  });

  it('delivers two text blocks one after the other, skipping data of only whitespace', async () => {
    const events = await streamOf([
      step.sse([
        ...frames(START, textStart(0), textDelta(0, 'A'), stop(0)),
        'data:    \n\n',
        ...frames(textStart(1), textDelta(1, 'B'), stop(1), DELTA(), STOP),
      ]),
    ]);
    expect(events).toStrictEqual([
      START,
      textStart(0),
      textDelta(0, 'A'),
      stop(0),
      textStart(1),
      textDelta(1, 'B'),
      stop(1),
      DELTA(),
      STOP,
    ]);
  });

  it('refuses a delta for a block it already closed because the next one started', async () => {
    const error = await rejectionOf(
      streamOf([
        step.sse(frames(START, textStart(0), textStart(1), textDelta(0, 'late'), stop(1), DELTA(), STOP)),
      ]),
    );
    expect(error).toMatchObject({ code: 'MODEL_EPROTO', provider: 'anthropic' });
    expect((error as Error).message).toMatch(/^the anthropic stream broke the event order: ./);
  });

  it('refuses a second cut tool input at once, even in a stream cut by max_tokens', async () => {
    const error = await rejectionOf(
      streamOf([
        step.sse(
          frames(
            START,
            toolStart(0, 'toolu_1'),
            toolDelta(0, '{"a":"x'),
            stop(0),
            toolStart(1, 'toolu_2'),
            toolDelta(1, '{"b":"y'),
            stop(1),
            DELTA('max_tokens'),
            STOP,
          ),
        ),
      ]),
    );
    expect(error).toMatchObject({
      code: 'MODEL_EPROTO',
      message: 'the anthropic stream sent tool input for block 1 that is not a JSON object: "{\\"b\\":\\"y"',
    });
  });
  it('says which stream event was not JSON', async () => {
    const error = await rejectionOf(streamOf([step.sse([...frames(START), 'event: ping\ndata: {nope\n\n'])]));
    expect(error).toMatchObject({
      code: 'MODEL_EPROTO',
      provider: 'anthropic',
      message: 'the anthropic stream event is not valid JSON: "{nope"',
    });
  });
  /** Every batch the stream delivered, and how it ended. */
  async function batchesOf(steps: Step[]) {
    const native = await provider(steps);
    const batches: MessageStreamEvent[][] = [];
    try {
      for await (const batch of native.stream(REQUEST, {}, attempt!.context, attempt!.report))
        batches.push(batch);
      return { batches, error: undefined };
    } catch (error) {
      return { batches, error };
    }
  }

  it('delivers what a chunk held before an invalid event, then fails, and never an empty batch', async () => {
    const together = await batchesOf([
      step.sse([frames(START, { type: 'content_block_delta', index: 0 }).join('')]),
    ]);
    expect(together.batches).toStrictEqual([[START]]);
    expect(together.error).toMatchObject({ code: 'MODEL_EPROTO' });
    const first = await batchesOf([
      step.sse([...frames(START), frames({ type: 'content_block_delta', index: 0 }).join('')], {
        frameDelayMs: 30,
      }),
    ]);
    expect(first.batches).toStrictEqual([[START]]);
    expect(first.error).toMatchObject({ code: 'MODEL_EPROTO' });
  });

  it('delivers no empty batch for a chunk of skipped data', async () => {
    const { batches, error } = await batchesOf([
      step.sse([...frames(START), 'data: \n\n', ...frames(DELTA(), STOP)], { frameDelayMs: 30 }),
    ]);
    expect(error).toBeUndefined();
    expect(batches.flat()).toStrictEqual([START, DELTA(), STOP]);
    expect(batches.every((batch) => batch.length > 0)).toBe(true);
  });
});

describe('anthropic provider: count_tokens and models in detail', () => {
  it('asks count_tokens and the model list for JSON, and reads a 299 answer of either as a success', async () => {
    const native = await provider([
      step.json({ input_tokens: 4 }, { status: 299 }),
      step.json({ data: [{ type: 'model', id: 'claude-a' }] }, { status: 299 }),
    ]);
    expect(await native.countTokens!(REQUEST, {}, attempt!.context, attempt!.report)).toStrictEqual({
      input_tokens: 4,
    });
    expect(await native.listModels!({}, attempt!.context, attempt!.report)).toStrictEqual({
      data: [{ type: 'model', id: 'claude-a' }],
    });
    expect(server!.requests.map((request) => request.headers['accept'])).toStrictEqual([
      'application/json',
      'application/json',
    ]);
  });

  it('passes an error status of the model list on', async () => {
    const native = await provider([
      step.json({ type: 'error', error: { type: 'permission_error', message: 'no' } }, { status: 403 }),
    ]);
    expect(await rejectionOf(native.listModels!({}, attempt!.context, attempt!.report))).toMatchObject({
      code: 'MODEL_EHTTP',
      status: 403,
      provider: 'anthropic',
    });
  });

  it('says which answer was not JSON, or had no count, naming the provider', async () => {
    const native = await provider([
      step.text(200, 'nope', { 'content-type': 'application/json' }),
      step.text(200, 'nope', { 'content-type': 'application/json' }),
      step.text(200, 'null', { 'content-type': 'application/json' }),
    ]);
    expect(
      await rejectionOf(native.countTokens!(REQUEST, {}, attempt!.context, attempt!.report)),
    ).toMatchObject({
      code: 'MODEL_EPROTO',
      provider: 'anthropic',
      message: 'the anthropic count_tokens response is not valid JSON: "nope"',
    });
    expect(await rejectionOf(native.listModels!({}, attempt!.context, attempt!.report))).toMatchObject({
      code: 'MODEL_EPROTO',
      provider: 'anthropic',
      message: 'the anthropic models response is not valid JSON: "nope"',
    });
    expect(
      await rejectionOf(native.countTokens!(REQUEST, {}, attempt!.context, attempt!.report)),
    ).toMatchObject({
      code: 'MODEL_EPROTO',
      provider: 'anthropic',
      message: 'the anthropic count_tokens response has no numeric input_tokens',
    });
  });

  it('refuses a model list of JSON null, naming the provider', async () => {
    const native = await provider([step.text(200, 'null', { 'content-type': 'application/json' })]);
    expect(await rejectionOf(native.listModels!({}, attempt!.context, attempt!.report))).toMatchObject({
      code: 'MODEL_EPROTO',
      provider: 'anthropic',
      message: 'the anthropic models response has no data array',
    });
  });
  it('inspects with a GET for JSON carrying the key', async () => {
    const native = await provider([step.json({ data: [{ type: 'model', id: 'claude-a' }] })]);
    await native.inspect!({}, attempt!.context, attempt!.report);
    expect(server!.requests[0]).toMatchObject({ method: 'GET', url: '/v1/models' });
    expect(server!.requests[0]!.headers['accept']).toBe('application/json');
    expect(server!.requests[0]!.headers['x-api-key']).toBe('sk-ant-direct-test');
  });
  it('finds a repeated tool_use id after several text blocks', async () => {
    const tool = { type: 'tool_use', id: 'toolu_twice', name: 'a', input: {} };
    const native = await provider([
      step.json({
        ...MESSAGE,
        content: [{ type: 'text', text: 'One' }, { type: 'text', text: 'Two' }, tool, tool],
        stop_reason: 'tool_use',
      }),
    ]);
    expect(await rejectionOf(native.send(REQUEST, {}, attempt!.context, attempt!.report))).toMatchObject({
      code: 'MODEL_EPROTO',
      message:
        'the anthropic answer uses the tool_use id "toolu_twice" for two calls; tool_use ids must be unique',
    });
  });

  it('passes on a tool_use block start that carries an input as it came', async () => {
    const start = {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_1', name: 'a', input: { preset: true } },
    };
    const events = await streamOf([
      step.sse(frames(START, start, { type: 'content_block_stop', index: 0 }, DELTA('tool_use'), STOP)),
    ]);
    expect(events[1]).toStrictEqual(start);
  });
});
