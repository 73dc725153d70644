/**
 * What `createTransport` checks and passes on, against a scripted upstream on loopback: requests refused
 * before anything is sent, the `none` provider's answers, count_tokens, the model list, an explicit
 * inspection, and the options that reach the upstream (extra headers, the response size limit, the id
 * source) or what the transport shows (its base URL).
 */
import { describe, expect, it } from 'vitest';
import type { TransportError } from '../../src/errors.js';
import { helloRequest, step, textMessage } from '../helpers/scripted-server.js';
import { rejection, useScriptedUpstream } from './scripted-upstream.js';

const KEY = 'sk-ant-transport-operations';
const TOKEN = 'tok-transport-operations';
const NO_CREDENTIALS =
  'no model credentials are configured: set ANTHROPIC_API_KEY to use Anthropic, or TPX_OAUTH_TOKEN (or TPX_OAUTH_TOKEN_FILE) together with TPX_BASE_URL to use an OpenAI-compatible endpoint';

const upstream = useScriptedUpstream({ key: KEY, token: TOKEN }, { maxRetries: 0 });
const { anthropicTransport, tpxTransport } = upstream;

async function drain(events: AsyncIterable<unknown>): Promise<unknown[]> {
  const seen: unknown[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

function fields(error: TransportError): unknown[] {
  return [error.code, error.status, error.retryable, error.body.error.type, error.message];
}

describe('requests refused before anything is sent', () => {
  it('refuses a message request without messages with MODEL_EINVAL, from send and from stream', async () => {
    const transport = anthropicTransport();
    upstream.answer = () => step.json(textMessage());
    const from = upstream.server.requests.length;
    const request = { model: 'claude-test', max_tokens: 64 } as never;
    const expected = [
      'MODEL_EINVAL',
      400,
      false,
      'invalid_request_error',
      'invalid Messages request: messages: is required',
    ];
    expect(fields(await rejection(transport.send(request)))).toStrictEqual(expected);
    expect(fields(await rejection(drain(transport.stream(request))))).toStrictEqual(expected);
    expect(upstream.server.requests.length - from).toBe(0);
  });

  it('refuses a stream’s maxRetries that is not a whole number, naming the option', async () => {
    const transport = anthropicTransport();
    const error = await rejection(
      drain(transport.stream(helloRequest({ stream: true }), { maxRetries: 0.5 })),
    );
    expect([error.code, error.message]).toStrictEqual([
      'MODEL_ECONFIG',
      'maxRetries must be a whole number ≥ 0, got 0.5',
    ]);
  });

  it('refuses a count_tokens request without messages, naming count_tokens', async () => {
    const transport = anthropicTransport();
    const from = upstream.server.requests.length;
    const error = await rejection(transport.countTokens!({ model: 'claude-test' } as never));
    expect(fields(error)).toStrictEqual([
      'MODEL_EINVAL',
      400,
      false,
      'invalid_request_error',
      'invalid count_tokens request: messages: is required',
    ]);
    expect(upstream.server.requests.length - from).toBe(0);
  });
});

describe('the none provider', () => {
  it('answers every exchange with its 401, whatever the request, without validating it', async () => {
    const transport = upstream.track({ maxRetries: 0 });
    const expected = ['MODEL_EAUTH', 401, false, 'authentication_error', NO_CREDENTIALS];
    const bad = { model: 'm' } as never;
    expect(fields(await rejection(transport.send(bad)))).toStrictEqual(expected);
    expect(fields(await rejection(drain(transport.stream(bad))))).toStrictEqual(expected);
    expect(fields(await rejection(transport.countTokens!(bad)))).toStrictEqual(expected);
    expect(fields(await rejection(transport.listModels!()))).toStrictEqual(expected);
    expect((await rejection(transport.send(bad))).provider).toBe('none');
  });

  it('ignores inspectUpstream: its policy caps nothing and checks no list', async () => {
    const transport = upstream.track({ maxRetries: 0, inspectUpstream: true });
    expect(transport.upstreamPolicy).toMatchObject({
      usesUpstreamModelList: false,
      capsToContextWindow: false,
    });
    const error = await rejection(transport.inspectUpstream!());
    expect(fields(error)).toStrictEqual([
      'MODEL_EAUTH',
      401,
      false,
      'authentication_error',
      'the none provider has no upstream to inspect',
    ]);
  });
});

describe('count_tokens, the model list and inspection', () => {
  it('counts tokens upstream for a valid request', async () => {
    const transport = anthropicTransport();
    upstream.answer = () => step.json({ input_tokens: 12 });
    const from = upstream.server.requests.length;
    expect(
      await transport.countTokens!({ model: 'claude-test', messages: [{ role: 'user', content: 'Hello' }] }),
    ).toStrictEqual({ input_tokens: 12 });
    expect(
      upstream.server.requests.slice(from).map((record) => [record.method, record.url, record.json]),
    ).toStrictEqual([
      [
        'POST',
        '/v1/messages/count_tokens',
        { model: 'claude-test', messages: [{ role: 'user', content: 'Hello' }] },
      ],
    ]);
  });

  it('lists the upstream’s models', async () => {
    const transport = anthropicTransport();
    const list = {
      data: [
        { type: 'model', id: 'claude-test', display_name: 'Claude Test', created_at: '2025-01-01T00:00:00Z' },
      ],
      has_more: false,
      first_id: 'claude-test',
      last_id: 'claude-test',
    };
    upstream.answer = () => step.json(list);
    const from = upstream.server.requests.length;
    expect(await transport.listModels!()).toStrictEqual(list);
    expect(upstream.server.requests.slice(from).map((record) => [record.method, record.url])).toStrictEqual([
      ['GET', '/v1/models'],
    ]);
  });

  it('inspects an anthropic upstream on request, though inspectUpstream was not set', async () => {
    const transport = anthropicTransport();
    upstream.answer = () => step.json({ data: [{ type: 'model', id: 'claude-test' }] });
    expect(await transport.inspectUpstream!()).toStrictEqual({
      modelsUrl: `${upstream.server.url}/v1/models`,
      modelsStatus: 200,
      modelsContentType: 'application/json',
      models: [{ id: 'claude-test' }],
    });
  });
});

describe('options that reach the upstream', () => {
  it('sends the upstreamHeaders given at creation with every request, as they were then', async () => {
    const upstreamHeaders: Record<string, string> = { 'x-team': 'platform' };
    const transport = anthropicTransport({ upstreamHeaders });
    upstreamHeaders['x-team'] = 'changed later';
    upstream.answer = () => step.json(textMessage());
    const from = upstream.server.requests.length;
    await transport.send(helloRequest());
    expect(upstream.server.requests.slice(from).map((record) => record.headers['x-team'])).toStrictEqual([
      'platform',
    ]);
  });

  it('sends no extra header without upstreamHeaders', async () => {
    const transport = anthropicTransport();
    upstream.answer = () => step.json(textMessage());
    const from = upstream.server.requests.length;
    await transport.send(helloRequest());
    expect(upstream.server.requests.slice(from).map((record) => record.headers['x-team'])).toStrictEqual([
      undefined,
    ]);
  });

  it('refuses a response larger than maxResponseBytes', async () => {
    const transport = anthropicTransport({ maxResponseBytes: 100 });
    upstream.answer = () => step.json(textMessage('x'.repeat(200)));
    const error = await rejection(transport.send(helloRequest()));
    expect([error.code, error.status, error.retryable, error.message]).toStrictEqual([
      'MODEL_ETOOBIG',
      502,
      false,
      'the anthropic response is larger than the limit of 100 bytes (maxResponseBytes)',
    ]);
  });

  it('names a message the upstream gave no id with an id from generateId', async () => {
    const transport = tpxTransport({ generateId: () => 'fromTheOption' });
    upstream.answer = () =>
      step.json({
        object: 'chat.completion',
        created: 1,
        model: 'served',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
      });
    const message = await transport.send(helloRequest());
    expect(message.id).toBe('msg_fromTheOption');
  });

  it('shows its base URL without trailing slashes', async () => {
    const transport = tpxTransport({ tpxBaseUrl: 'http://127.0.0.1:9/v1//' });
    expect(transport.upstreamPolicy!.baseUrl).toBe('http://127.0.0.1:9/v1');
  });
});

describe('credentials in upstream errors', () => {
  it('redacts the API key an anthropic upstream echoes in its error', async () => {
    const transport = anthropicTransport();
    upstream.answer = () =>
      step.json(
        { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key: ${KEY}` } },
        { status: 401 },
      );
    const error = await rejection(transport.send(helloRequest()));
    expect([error.code, error.status, error.message]).toStrictEqual([
      'MODEL_EAUTH',
      401,
      '401 authentication_error: invalid x-api-key: [redacted]',
    ]);
  });

  it('redacts the bearer token a tpx upstream echoes in its error', async () => {
    const transport = tpxTransport();
    upstream.answer = () =>
      step.json(
        { error: { message: `bad request from Bearer ${TOKEN}`, type: 'invalid_request_error' } },
        { status: 400 },
      );
    const error = await rejection(transport.send(helloRequest()));
    expect([error.code, error.status, error.message]).toStrictEqual([
      'MODEL_EHTTP',
      400,
      '400 invalid_request_error: bad request from Bearer [redacted]',
    ]);
  });
});
