/**
 * `tpx serve` with the official `@anthropic-ai/sdk` as its client, in front of a real llama.cpp server,
 * for both providers: `tpx` (dialect `llamacpp`, `/v1/chat/completions`) and `anthropic` (llama.cpp's
 * own `/v1/messages`). A recording tap between tpx and the server shows what crossed the wire, so the
 * tests can hold the ids, counts and lists the SDK received against the server's own.
 */
import Anthropic from '@anthropic-ai/sdk';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { createTransport } from '../../src/transport/create-transport.js';
import type { ModelTransport } from '../../src/transport/types.js';
import { startLlamaServer, type LlamaServer } from './llama-server.js';
import { weatherTool } from './real-server-support.js';
import { startRecordingTap, type RecordingTap, type TappedExchange } from './recording-tap.js';

let server: LlamaServer;
let tap: RecordingTap;
const proxies = new Map<'tpx' | 'anthropic', { proxy: RunningServer; transport: ModelTransport }>();

beforeAll(async () => {
  server = await startLlamaServer({ model: 'tiny-tools' });
  tap = await startRecordingTap(server.url);
  const environments = {
    tpx: { TPX_OAUTH_TOKEN: 'real-server-token', TPX_BASE_URL: `${tap.url}/v1`, TPX_DIALECT: 'llamacpp' },
    anthropic: { ANTHROPIC_API_KEY: 'real-server-key', ANTHROPIC_BASE_URL: tap.url },
  };
  for (const provider of ['tpx', 'anthropic'] as const) {
    const transport = createTransport({ env: environments[provider], maxRetries: 0 });
    const proxy = await startServer({ transport, port: 0, logger: pino({ level: 'silent' }) });
    proxies.set(provider, { proxy, transport });
  }
});

afterAll(async () => {
  for (const { proxy, transport } of proxies.values()) {
    await proxy.close();
    await transport.close();
  }
  await tap?.close();
  await server?.stop();
});

const question = { role: 'user' as const, content: 'What is the weather in Paris and in Rome?' };
const forced = {
  model: 'tiny',
  max_tokens: 400,
  tools: [weatherTool as Anthropic.Tool],
  tool_choice: { type: 'any' as const },
  messages: [question],
};

/** The ids of the tool calls in a server answer, whichever wire it came on. */
function serverToolIds(exchange: TappedExchange): string[] {
  const answer = exchange.response.json as {
    content?: { type: string; id: string }[];
    choices?: { message: { tool_calls?: { id: string }[] } }[];
  };
  if (answer.content !== undefined) {
    return answer.content.filter((block) => block.type === 'tool_use').map((block) => block.id);
  }
  return (answer.choices?.[0]?.message.tool_calls ?? []).map((call) => call.id);
}

/** The tool-result ids a request sent to the server carried, whichever wire it went on. */
function sentToolResultIds(exchange: TappedExchange): string[] {
  const body = exchange.request.json as {
    messages: { role: string; tool_call_id?: string; content?: unknown }[];
  };
  const ids: string[] = [];
  for (const message of body.messages) {
    if (message.role === 'tool' && message.tool_call_id !== undefined) ids.push(message.tool_call_id);
    if (Array.isArray(message.content)) {
      for (const block of message.content as { type: string; tool_use_id?: string }[]) {
        if (block.type === 'tool_result' && block.tool_use_id !== undefined) ids.push(block.tool_use_id);
      }
    }
  }
  return ids;
}

/** The number of prompt tokens the server reported for its last answer. */
function serverPromptTokens(exchange: TappedExchange): number {
  const usage = (exchange.response.json as { usage: Record<string, number> }).usage;
  if (usage['prompt_tokens'] !== undefined) return usage['prompt_tokens'];
  return usage['input_tokens']! + (usage['cache_read_input_tokens'] ?? 0);
}

describe.each(['tpx', 'anthropic'] as const)('tpx serve (%s provider) with the official SDK', (provider) => {
  let client: Anthropic;
  const route = provider === 'tpx' ? '/v1/chat/completions' : '/v1/messages';

  beforeAll(() => {
    client = new Anthropic({
      baseURL: proxies.get(provider)!.proxy.url,
      apiKey: 'client-key',
      maxRetries: 0,
    });
  });

  it('answers a forced tool call with parallel tool_use blocks, each id distinct', async () => {
    const message = await client.messages.create(forced);
    expect(tap.exchanges.at(-1)!.request.url).toBe(route);
    expect(message.stop_reason).toBe('tool_use');
    const calls = message.content.filter((block) => block.type === 'tool_use');
    expect(calls.length).toBe(serverToolIds(tap.exchanges.at(-1)!).length);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(new Set(calls.map((call) => call.id)).size).toBe(calls.length);
    for (const call of calls) expect(Object.keys(call.input as object).sort()).toEqual(['city', 'unit']);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it('streams the same forced call: the SDK’s final message has the blocks and stop reason of send', async () => {
    const sent = await client.messages.create(forced);
    const stream = client.messages.stream(forced);
    const types: string[] = [];
    stream.on('streamEvent', (event) => types.push(event.type));
    const streamed = await stream.finalMessage();
    expect(tap.exchanges.at(-1)!.request.json).toMatchObject({ stream: true });
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
    expect(streamed.stop_reason).toBe(sent.stop_reason);
    const shape = (message: Anthropic.Message) =>
      message.content.map((block) => (block.type === 'tool_use' ? { ...block, id: '<id>' } : block));
    expect(shape(streamed)).toEqual(shape(sent));
    expect(streamed.usage.output_tokens).toBe(sent.usage.output_tokens);
  });

  it('completes the tool_result round trip: the server gets its own call ids back', async () => {
    const first = await client.messages.create(forced);
    const serverIds = serverToolIds(tap.exchanges.at(-1)!);
    const calls = first.content.filter((block) => block.type === 'tool_use');
    const second = await client.messages
      .stream({
        ...forced,
        tool_choice: { type: 'auto' },
        max_tokens: 16,
        messages: [
          question,
          { role: 'assistant', content: first.content },
          {
            role: 'user',
            content: calls.map((call) => ({
              type: 'tool_result' as const,
              tool_use_id: call.id,
              content: 'sunny, 21 °C',
            })),
          },
        ],
      })
      .finalMessage();
    expect(second.type).toBe('message');
    expect(tap.exchanges.at(-1)!.response.status).toBe(200);
    expect(sentToolResultIds(tap.exchanges.at(-1)!)).toEqual(serverIds);
  });

  it('counts tokens exactly as the server counts the prompt it then answers', async () => {
    const { max_tokens: _maxTokens, ...countRequest } = { ...forced, max_tokens: 8 };
    const count = await client.messages.countTokens(countRequest);
    await client.messages.create({ ...forced, max_tokens: 8 });
    expect(count.input_tokens).toBe(serverPromptTokens(tap.exchanges.at(-1)!));
  });

  it('lists the served model in the Messages list shape', async () => {
    const page = await client.models.list();
    expect(tap.exchanges.at(-1)!.request.url).toBe('/v1/models');
    expect(page.data.map((model) => model.id)).toEqual([server.modelPath]);
    expect(page.data[0]!.type).toBe('model');
    expect(page.data[0]!.display_name).toBe(server.modelPath);
  });
});
