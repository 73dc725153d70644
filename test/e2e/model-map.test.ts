/**
 * Model mapping, output caps and loop detection through `tpx serve` (in-process), with the official SDK
 * as the client and a vLLM-like scripted upstream on loopback: it lists its models with `max_model_len`,
 * answers 404 for a model it does not serve and 400 for a request longer than the context, as vLLM does.
 */
import { createServer, type Server } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { HOP_HEADER, createInstanceId } from '../../src/server/loop-guard.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { createTransport } from '../../src/transport/create-transport.js';
import type { ModelTransport, TransportOptions } from '../../src/transport/types.js';
import {
  startScriptedServer,
  step,
  type RecordedRequest,
  type ScriptedServer,
} from '../helpers/scripted-server.js';
import { captureLogs } from './serve-support.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

interface Served {
  id: string;
  max_model_len: number;
}

/** A vLLM-like upstream serving `models`. */
async function startVllmLike(models: readonly Served[]): Promise<ScriptedServer> {
  const server = await startScriptedServer((record: RecordedRequest) => {
    if (record.method === 'GET' && record.url === '/v1/models') {
      return step.json({ object: 'list', data: models.map((model) => ({ object: 'model', ...model })) });
    }
    if (record.method === 'POST' && record.url === '/v1/chat/completions') {
      const body = record.json as { model: string; max_tokens?: number; messages: unknown[] };
      const served = models.find((model) => model.id === body.model);
      if (served === undefined) {
        return step.json(
          {
            object: 'error',
            message: `The model \`${body.model}\` does not exist.`,
            type: 'NotFoundError',
            code: 404,
          },
          { status: 404 },
        );
      }
      const inputTokens = Math.ceil(record.bodyText.length / 4);
      if ((body.max_tokens ?? 0) + inputTokens > served.max_model_len) {
        return step.json(
          {
            object: 'error',
            message: `This model's maximum context length is ${served.max_model_len} tokens. However, you requested ${body.max_tokens} output tokens.`,
            type: 'BadRequestError',
            code: 400,
          },
          { status: 400 },
        );
      }
      return step.json({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: `hello from ${body.model}` },
            finish_reason: 'stop',
          },
        ],
        usage: { prompt_tokens: inputTokens, completion_tokens: 3, total_tokens: inputTokens + 3 },
      });
    }
    return step.json({ detail: 'Not Found' }, { status: 404 });
  });
  closers.push(() => server.close());
  return server;
}

async function startProxy(
  upstreamUrl: string,
  transportOptions: Partial<TransportOptions>,
  serve: { instanceId?: string } = {},
): Promise<{
  server: RunningServer;
  transport: ModelTransport;
  client: Anthropic;
  logs: ReturnType<typeof captureLogs>;
}> {
  const transport = createTransport({
    env: {},
    tpxToken: 'local',
    tpxBaseUrl: upstreamUrl,
    inspectUpstream: true,
    maxRetries: 0,
    ...transportOptions,
  });
  const logs = captureLogs();
  const server = await startServer({ transport, port: 0, logger: logs.logger, ...serve });
  closers.push(async () => {
    await server.close();
    await transport.close();
  });
  const client = new Anthropic({ baseURL: server.url, apiKey: 'unused', maxRetries: 0 });
  return { server, transport, client, logs };
}

function chatRequests(upstream: ScriptedServer): { model: string; max_tokens: number }[] {
  return upstream.requests
    .filter((request) => request.method === 'POST')
    .map((request) => request.json as { model: string; max_tokens: number });
}

const TWO_MODELS: Served[] = [
  { id: 'qwen3-4b', max_model_len: 32_768 },
  { id: 'qwen3-32b', max_model_len: 32_768 },
];

describe('model mapping', () => {
  it('sends haiku-tier and opus-tier requests to the models the rules name, first match wins', async () => {
    const upstream = await startVllmLike(TWO_MODELS);
    const { client, logs } = await startProxy(`${upstream.url}/v1`, {
      modelMap: '*haiku*=qwen3-4b, *=qwen3-32b',
    });
    const small = await client.messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'title this' }],
    });
    const large = await client.messages.create({
      model: 'claude-opus-4-1',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'do the work' }],
    });
    expect(chatRequests(upstream).map((request) => request.model)).toEqual(['qwen3-4b', 'qwen3-32b']);
    // The client hears of the model it asked for; the exchange log records both.
    expect(small.model).toBe('claude-haiku-4-5');
    expect(large.model).toBe('claude-opus-4-1');
    expect(large.content).toEqual([{ type: 'text', text: 'hello from qwen3-32b' }]);
    const lines = logs.lines().filter((line) => line['msg'] === 'exchange');
    expect(lines.map((line) => [line['model'], line['upstreamModel']])).toEqual([
      ['claude-haiku-4-5', 'qwen3-4b'],
      ['claude-opus-4-1', 'qwen3-32b'],
    ]);
  });

  it('keeps the requested model in a streamed message_start', async () => {
    const upstream = await startScriptedServer((record) =>
      record.method === 'GET'
        ? step.json({ data: [{ id: 'only-model' }] })
        : step.sse([
            `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'only-model', choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' }, finish_reason: null }] })}\n\n`,
            `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'only-model', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
            'data: [DONE]\n\n',
          ]),
    );
    closers.push(() => upstream.close());
    const { client } = await startProxy(upstream.url, {});
    const stream = client.messages.stream({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const message = await stream.finalMessage();
    expect(message.model).toBe('claude-sonnet-4-5');
    expect(
      (upstream.requests.find((request) => request.method === 'POST')!.json as { model: string }).model,
    ).toBe('only-model');
  });

  it('maps Claude names to the upstream when it serves exactly one model, and passes listed names through', async () => {
    const upstream = await startVllmLike([{ id: 'qwen3-32b', max_model_len: 32_768 }]);
    const { client } = await startProxy(`${upstream.url}/v1`, {});
    await client.messages.create({
      model: 'claude-opus-4-1',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'a' }],
    });
    await client.messages.create({
      model: 'qwen3-32b',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'b' }],
    });
    expect(chatRequests(upstream).map((request) => request.model)).toEqual(['qwen3-32b', 'qwen3-32b']);
    // One look at the list served both exchanges.
    expect(upstream.requests.filter((request) => request.url === '/v1/models')).toHaveLength(1);
  });

  it('answers 404 listing the upstream models and naming TPX_MODEL_MAP when the name cannot be decided', async () => {
    const upstream = await startVllmLike(TWO_MODELS);
    const { client } = await startProxy(`${upstream.url}/v1`, {});
    const failure = await client.messages
      .create({ model: 'claude-opus-4-1', max_tokens: 50, messages: [{ role: 'user', content: 'a' }] })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Anthropic.NotFoundError);
    const message = (failure as InstanceType<typeof Anthropic.NotFoundError>).message;
    expect(message).toContain('claude-opus-4-1');
    expect(message).toContain('qwen3-4b, qwen3-32b');
    expect(message).toContain('TPX_MODEL_MAP');
    expect(chatRequests(upstream)).toHaveLength(0);
    // A name the upstream lists still goes through unchanged (Claude Code's `/model qwen3-4b`).
    const listed = await client.messages.create({
      model: 'qwen3-4b',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'a' }],
    });
    expect(listed.content).toEqual([{ type: 'text', text: 'hello from qwen3-4b' }]);
  });

  it('uses TPX_MODEL as the catch-all after the rules', async () => {
    const upstream = await startVllmLike(TWO_MODELS);
    const { client } = await startProxy(`${upstream.url}/v1`, {
      env: { TPX_MODEL_MAP: '*haiku*=qwen3-4b', TPX_MODEL: 'qwen3-32b' },
      inspectUpstream: false,
    });
    await client.messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'a' }],
    });
    await client.messages.create({
      model: 'claude-opus-4-1',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'b' }],
    });
    expect(chatRequests(upstream).map((request) => request.model)).toEqual(['qwen3-4b', 'qwen3-32b']);
    // Without inspectUpstream nothing but the exchanges reached the upstream.
    expect(upstream.requests.every((request) => request.method === 'POST')).toBe(true);
  });

  it('maps the model on the native path too, and answers with the requested name', async () => {
    const upstream = await startScriptedServer((record) => {
      const body = record.json as { model: string };
      return step.json({
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: [{ type: 'text', text: `native ${body.model}` }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 3, output_tokens: 2 },
      });
    });
    closers.push(() => upstream.close());
    const { client } = await startProxy(upstream.url, {
      anthropicApiKey: 'sk-ant-test',
      anthropicBaseUrl: upstream.url,
      modelMap: 'claude-*=local-model',
      inspectUpstream: false,
    });
    const message = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'a' }],
    });
    expect((upstream.requests[0]!.json as { model: string }).model).toBe('local-model');
    expect(message.model).toBe('claude-sonnet-4-5');
    expect(message.content).toEqual([{ type: 'text', text: 'native local-model' }]);
  });

  it('refuses a model map that is not pattern=model, naming the variable', () => {
    expect(() =>
      createTransport({
        env: { TPX_MODEL_MAP: '*haiku*' },
        tpxToken: 't',
        tpxBaseUrl: 'http://127.0.0.1:9/v1',
      }),
    ).toThrow(/TPX_MODEL_MAP has an entry that is not pattern=model: "\*haiku\*"/);
  });
});

describe('output caps', () => {
  it("caps Claude Code's max_tokens to what the upstream's context window leaves, where vLLM would refuse", async () => {
    const upstream = await startVllmLike([{ id: 'qwen3-32b', max_model_len: 32_768 }]);
    const { client, logs } = await startProxy(`${upstream.url}/v1`, {});
    const message = await client.messages.create(
      {
        model: 'claude-opus-4-1',
        max_tokens: 128_000,
        messages: [{ role: 'user', content: 'x'.repeat(4_000) }],
      },
      { timeout: 30_000 },
    );
    expect(message.content).toEqual([{ type: 'text', text: 'hello from qwen3-32b' }]);
    const sent = chatRequests(upstream)[0]!.max_tokens;
    expect(sent).toBeLessThan(32_768 - 1_000);
    expect(sent).toBeGreaterThan(32_768 / 2);
    const line = logs.lines().find((entry) => entry['msg'] === 'exchange')!;
    expect(line['upstreamMaxTokens']).toBe(sent);
  });

  it('caps max_tokens at TPX_MAX_TOKENS and leaves smaller requests alone', async () => {
    const upstream = await startVllmLike(TWO_MODELS);
    const { client } = await startProxy(`${upstream.url}/v1`, {
      env: { TPX_MAX_TOKENS: '2000' },
      modelMap: '*=qwen3-4b',
      inspectUpstream: false,
    });
    await client.messages.create(
      {
        model: 'claude-opus-4-1',
        max_tokens: 128_000,
        messages: [{ role: 'user', content: 'a' }],
      },
      { timeout: 30_000 },
    );
    await client.messages.create({
      model: 'claude-opus-4-1',
      max_tokens: 500,
      messages: [{ role: 'user', content: 'b' }],
    });
    expect(chatRequests(upstream).map((request) => request.max_tokens)).toEqual([2000, 500]);
  });

  it('refuses a prompt that leaves no room in the context window, before sending it', async () => {
    const upstream = await startVllmLike([{ id: 'small', max_model_len: 1_000 }]);
    const { client } = await startProxy(`${upstream.url}/v1`, {});
    const failure = await client.messages
      .create({
        model: 'small',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'word '.repeat(2_000) }],
      })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Anthropic.BadRequestError);
    expect((failure as Error).message).toMatch(
      /prompt is too long: about \d+ input tokens.*context window is 1000 tokens/,
    );
    expect(chatRequests(upstream)).toHaveLength(0);
  });

  it('refuses a TPX_MAX_TOKENS that is not a whole number above 0', () => {
    expect(() =>
      createTransport({ env: { TPX_MAX_TOKENS: '32k' }, tpxToken: 't', tpxBaseUrl: 'http://127.0.0.1:9/v1' }),
    ).toThrow(/TPX_MAX_TOKENS must be a whole number of tokens above 0, got "32k"/);
  });
});

/** A TCP forwarder: every connection to it is piped to `target`. Counts connections. */
async function startForwarder(target: () => number): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createTcpServer((inbound) => {
    connections++;
    const outbound = connect(target(), '127.0.0.1');
    sockets.add(inbound).add(outbound);
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port: (server.address() as AddressInfo).port, connections: () => connections };
}

describe('loop detection', () => {
  it('answers a request that came back around with 508 in one hop, never forwarding it again', async () => {
    let proxyPort = 0;
    const forwarder = await startForwarder(() => proxyPort);
    const instanceId = createInstanceId();
    const { server, client, logs } = await startProxy(
      `http://127.0.0.1:${forwarder.port}`,
      {
        anthropicApiKey: 'sk-ant-loop',
        anthropicBaseUrl: `http://127.0.0.1:${forwarder.port}`,
        upstreamHeaders: { [HOP_HEADER]: instanceId },
        inspectUpstream: false,
      },
      { instanceId },
    );
    proxyPort = server.port;
    const failure = await client.messages
      .create({ model: 'claude-opus-4-1', max_tokens: 50, messages: [{ role: 'user', content: 'a' }] })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Anthropic.APIError);
    const apiError = failure as InstanceType<typeof Anthropic.APIError>;
    // The client sees the upstream's 508 as the exchange's error; the message says what is wrong.
    expect(apiError.message).toContain('request loop');
    expect(apiError.message).toContain(server.url);
    expect(forwarder.connections()).toBe(1);
    const lines = logs.lines().filter((line) => line['msg'] === 'exchange');
    expect(lines).toHaveLength(2);
    expect(lines.map((line) => line['status']).sort()).toEqual([508, 508]);
  });

  it('refuses to start when the upstream base URL is its own listening address', async () => {
    const probe: Server = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const transport = createTransport({
      env: {},
      anthropicApiKey: 'sk-ant-self',
      anthropicBaseUrl: `http://localhost:${port}`,
    });
    closers.push(() => transport.close());
    await expect(startServer({ transport, port, logger: false })).rejects.toThrow(
      /ANTHROPIC_BASE_URL \(http:\/\/localhost:\d+\) is this proxy's own address/,
    );
  });
});
