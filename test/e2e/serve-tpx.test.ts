/**
 * `tpx serve` on the `tpx` path, driven by the official SDK as a real client against the mock model.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { UPSTREAM_TOKEN, eventually, startTpxProxy, type TpxProxy } from './serve-support.js';

const CLIENT_KEY = 'sk-client-own-key-should-stay-here';

const TOOLS = [
  {
    name: 'add',
    description: 'Adds two numbers',
    input_schema: {
      type: 'object' as const,
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
  },
  { name: 'now', description: 'The time', input_schema: { type: 'object' as const, properties: {} } },
];

let proxy: TpxProxy | undefined;

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

function clientFor(server: { url: string }, options: { maxRetries?: number } = {}): Anthropic {
  return new Anthropic({ baseURL: server.url, apiKey: CLIENT_KEY, maxRetries: options.maxRetries ?? 0 });
}

describe('tpx serve in front of an OpenAI-compatible model', () => {
  it('answers a text request through the SDK', async () => {
    proxy = await startTpxProxy({ mock: { script: { replies: [{ text: 'Hello from the mock.' }] } } });
    const message = await clientFor(proxy.server).messages.create({
      model: 'claude-test',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from the mock.' }]);
    expect(message.stop_reason).toBe('end_turn');
  });

  it('streams a text answer the SDK assembles into the final message', async () => {
    proxy = await startTpxProxy({ mock: { script: { replies: [{ text: 'Streaming works fine.' }] } } });
    const message = await clientFor(proxy.server)
      .messages.stream({ model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] })
      .finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'Streaming works fine.' }]);
    expect(proxy.mock.requests[0]!.headers['accept']).toBe('text/event-stream');
  });

  it('round-trips the ids of two parallel tool calls exactly as the upstream emitted them', async () => {
    proxy = await startTpxProxy({
      mock: {
        script: {
          replies: [
            {
              tool_calls: [
                { id: 'call:weird/ïd 1', name: 'add', arguments: { a: 2, b: 3 } },
                { id: 'call.two', name: 'now', arguments: {} },
              ],
            },
          ],
        },
      },
    });
    const client = clientFor(proxy.server);
    const first = await client.messages
      .stream({
        model: 'claude-test',
        max_tokens: 64,
        tools: TOOLS,
        messages: [{ role: 'user', content: 'Add 2 and 3' }],
      })
      .finalMessage();
    const toolUses = first.content.filter((block) => block.type === 'tool_use');
    expect(toolUses.map((block) => block.name)).toEqual(['add', 'now']);
    const ids = toolUses.map((block) => block.id);
    expect(new Set(ids).size).toBe(2);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]+$/);

    const second = await client.messages.create({
      model: 'claude-test',
      max_tokens: 64,
      tools: TOOLS,
      messages: [
        { role: 'user', content: 'Add 2 and 3' },
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: ids[0]!, content: '5' },
            { type: 'tool_result', tool_use_id: ids[1]!, content: '12:00' },
          ],
        },
      ],
    });
    expect(second.content[0]).toMatchObject({ type: 'text' });
    const upstreamMessages = (
      proxy.mock.requests[1]!.body as { messages: { role: string; tool_call_id?: string }[] }
    ).messages;
    const toolMessageIds = upstreamMessages
      .filter((message) => message.role === 'tool')
      .map((message) => message.tool_call_id);
    expect(toolMessageIds).toEqual(['call:weird/ïd 1', 'call.two']);
  });

  it('passes an upstream 429 and its retry-after to the client', async () => {
    proxy = await startTpxProxy({
      mock: { script: { replies: [{ error: { status: 429, headers: { 'retry-after': '3' } } }] } },
      transport: { maxRetries: 0 },
    });
    const error = await clientFor(proxy.server)
      .messages.create({ model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    const apiError = error as InstanceType<typeof Anthropic.RateLimitError>;
    expect(apiError.status).toBe(429);
    expect(apiError.headers?.get('retry-after')).toBe('3');
    expect(apiError.headers?.get('request-id')).toMatch(/^req_/);
    expect(proxy.mock.requests).toHaveLength(1);
  });

  it('never sends the client credentials upstream, only its own start-up token', async () => {
    proxy = await startTpxProxy();
    const bearerClient = new Anthropic({ baseURL: proxy.server.url, authToken: CLIENT_KEY, maxRetries: 0 });
    await bearerClient.messages.create({
      model: 'claude-test',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    const keyClient = new Anthropic({
      baseURL: proxy.server.url,
      apiKey: 'unused',
      defaultHeaders: { 'x-api-key': CLIENT_KEY, Authorization: null },
      maxRetries: 0,
    });
    await keyClient.messages.create({
      model: 'claude-test',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(proxy.mock.requests).toHaveLength(2);
    for (const request of proxy.mock.requests) {
      expect(request.headers['authorization']).toBe(`Bearer ${UPSTREAM_TOKEN}`);
      expect(request.headers['x-api-key']).toBeUndefined();
      expect(JSON.stringify(request.headers)).not.toContain(CLIENT_KEY);
    }
  });

  it('aborts the upstream request when the client disconnects mid-stream', async () => {
    // The upstream stalls after its first chunk: only the client's disconnect can end the exchange soon.
    proxy = await startTpxProxy({
      mock: {
        script: {
          replies: [{ text: 'one two three four five six seven eight nine ten', chunk_delay_ms: 30_000 }],
        },
      },
    });
    const stream = await clientFor(proxy.server).messages.create({
      model: 'claude-test',
      max_tokens: 64,
      stream: true,
      messages: [{ role: 'user', content: 'Count' }],
    });
    for await (const event of stream) {
      expect(event.type).toBe('message_start');
      break; // leaving the loop aborts the SDK's request
    }
    const mock = proxy.mock;
    await eventually(() => mock.requests[0]?.aborted === true, 2_000);
    await eventually(() => proxy!.logs.lines().some((line) => line['msg'] === 'exchange'));
    expect(proxy.logs.lines().find((line) => line['msg'] === 'exchange')).toMatchObject({
      clientClosed: true,
      stream: true,
    });
  });

  it('answers count_tokens with a local estimate that is not below the text size', async () => {
    proxy = await startTpxProxy();
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(40);
    const count = await clientFor(proxy.server).messages.countTokens({
      model: 'claude-test',
      system: 'Be brief.',
      tools: TOOLS,
      messages: [{ role: 'user', content: text }],
    });
    // 40 × 10 words: a BPE gives about 400 tokens; the estimate leans high and adds the tool preamble.
    expect(count.input_tokens).toBeGreaterThan(400 + 400);
    expect(proxy.mock.requests).toHaveLength(0);
  });

  it('lists the upstream models in the Messages shape', async () => {
    proxy = await startTpxProxy({ mock: { model: 'qwen-local' } });
    const page = await clientFor(proxy.server).models.list();
    expect(page.data.map((model) => [model.type, model.id, model.display_name])).toEqual([
      ['model', 'qwen-local', 'qwen-local'],
    ]);
  });

  it('logs every exchange without any secret', async () => {
    proxy = await startTpxProxy({ serve: { proxyToken: 'proxy-token-not-for-logs' } });
    const client = new Anthropic({
      baseURL: proxy.server.url,
      authToken: 'proxy-token-not-for-logs',
      maxRetries: 0,
    });
    await client.messages.create({
      model: 'claude-test',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Secret plan' }],
    });
    await client.messages
      .stream({ model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'Secret plan' }] })
      .finalMessage();
    await new Anthropic({ baseURL: proxy.server.url, authToken: CLIENT_KEY, maxRetries: 0 }).models
      .list()
      .catch(() => undefined);
    const exchanges = proxy.logs.lines().filter((line) => line['msg'] === 'exchange');
    expect(exchanges.map((line) => [line['path'], line['status']])).toEqual([
      ['/v1/messages', 200],
      ['/v1/messages', 200],
      ['/v1/models', 401],
    ]);
    expect(exchanges[0]).toMatchObject({ provider: 'tpx', model: 'claude-test', stream: false, attempts: 1 });
    expect(exchanges[0]!['usage']).toMatchObject({
      input_tokens: expect.any(Number),
      output_tokens: expect.any(Number),
    });
    const text = proxy.logs.text();
    for (const secret of [UPSTREAM_TOKEN, 'proxy-token-not-for-logs', CLIENT_KEY, 'Secret plan']) {
      expect(text).not.toContain(secret);
    }
  });
});
