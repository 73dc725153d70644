/**
 * The `tpx` provider over the Responses wire (`TPX_WIRE=responses`, `POST /v1/responses`) against a real
 * llama.cpp server: a forced tool call, the tool_result round trip (a recording tap shows the server gets
 * its own `call_id` back), a stream, and the same through `tpx serve` with the official SDK. The model's
 * text is random: these tests pin shapes, ids, pairing, usage and stop reasons, never the words.
 *
 * What llama.cpp's `/v1/responses` (b11669) does, as these tests and the recordings under
 * `src/translate/__fixtures__/upstream-openai-responses/llamacpp/` show: `tool_choice: "required"` is
 * honoured; `text.format` and a named function `tool_choice` are accepted but not enforced; `store`,
 * `include` and `reasoning` are accepted; a `reasoning` input item must carry a `content` array; stream
 * events carry `item_id` but no `output_index` or `sequence_number`; a response cut by
 * `max_output_tokens` still says `status: "completed"`; `previous_response_id`, `input_file` and (without
 * a projector) `input_image` are refused.
 */
import Anthropic from '@anthropic-ai/sdk';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accumulateStream } from '../helpers/accumulate-stream.js';
import type { ContentBlock, MessageStreamEvent, ToolUseBlock } from '../../src/protocol/messages.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { createTransport } from '../../src/transport/create-transport.js';
import type { ModelTransport } from '../../src/transport/types.js';
import { startTpxServe } from '../e2e/cli-process.js';
import { startLlamaServer, type LlamaServer } from './llama-server.js';
import { startRecordingTap, type RecordingTap } from './recording-tap.js';

const weatherTool = {
  name: 'get_weather',
  description: 'Current weather for a city.',
  input_schema: {
    type: 'object' as const,
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
    required: ['city', 'unit'],
  },
};

let server: LlamaServer;
let tap: RecordingTap;
let transport: ModelTransport;

beforeAll(async () => {
  server = await startLlamaServer({ model: 'tiny-tools' });
  tap = await startRecordingTap(server.url);
  transport = createTransport({
    env: {},
    tpxToken: 'real-server-token',
    tpxBaseUrl: `${tap.url}/v1`,
    tpxDialect: 'llamacpp',
    tpxWire: 'responses',
    maxRetries: 0,
  });
});

afterAll(async () => {
  await transport?.close();
  await tap?.close();
  await server?.stop();
});

function toolUses(content: readonly unknown[]): ToolUseBlock[] {
  return content.filter((block): block is ToolUseBlock => (block as ContentBlock).type === 'tool_use');
}

describe('tpx provider over /v1/responses against llama.cpp', () => {
  it('answers a forced tool call with tool_use blocks whose input follows the schema', async () => {
    const message = await transport.send({
      model: 'tiny',
      max_tokens: 300,
      system: 'Use the tools.',
      tools: [weatherTool],
      tool_choice: { type: 'any' },
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    });
    const calls = toolUses(message.content);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls[0]!.name).toBe('get_weather');
    expect(calls[0]!.id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Object.keys(calls[0]!.input).sort()).toEqual(['city', 'unit']);
    expect(['tool_use', 'max_tokens']).toContain(message.stop_reason);
    expect(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0)).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    const sent = tap.exchanges.at(-1)!.request;
    expect(sent.url).toBe('/v1/responses');
    expect(sent.json).toMatchObject({
      instructions: 'Use the tools.',
      tool_choice: 'required',
      store: false,
      include: ['reasoning.encrypted_content'],
    });
  });

  it('sends the tool results back under the call ids the server emitted (round trip)', async () => {
    const request = {
      model: 'tiny',
      max_tokens: 300,
      tools: [weatherTool],
      tool_choice: { type: 'any' as const },
      messages: [{ role: 'user' as const, content: 'Weather in Oslo?' }],
    };
    const first = await transport.send(request);
    const calls = toolUses(first.content);
    expect(calls.length).toBeGreaterThan(0);
    const emitted = (
      tap.exchanges.at(-1)!.response.json as { output: { type: string; call_id?: string }[] }
    ).output
      .filter((item) => item.type === 'function_call')
      .map((item) => item.call_id);

    const second = await transport.send({
      ...request,
      tool_choice: { type: 'auto' },
      messages: [
        ...request.messages,
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: calls.map((call) => ({
            type: 'tool_result' as const,
            tool_use_id: call.id,
            content: '12 C',
          })),
        },
      ],
    });
    expect(second.type).toBe('message');
    const input = (tap.exchanges.at(-1)!.request.json as { input: { type: string; call_id?: string }[] })
      .input;
    const sentCalls = input.filter((item) => item.type === 'function_call').map((item) => item.call_id);
    const sentOutputs = input
      .filter((item) => item.type === 'function_call_output')
      .map((item) => item.call_id);
    // Every call the caller saw goes back under the server's own id, and each is answered once.
    expect(sentCalls).toEqual(emitted.slice(0, calls.length));
    expect(sentOutputs).toEqual(sentCalls);
  });

  it('streams a forced tool call into a grammar-complete Messages stream', async () => {
    const events: MessageStreamEvent[] = [];
    for await (const event of transport.stream({
      model: 'tiny',
      max_tokens: 300,
      tools: [weatherTool],
      tool_choice: { type: 'any' },
      messages: [{ role: 'user', content: 'Weather in Rome?' }],
    })) {
      events.push(event);
    }
    expect(events[0]!.type).toBe('message_start');
    expect(events.at(-1)).toEqual({ type: 'message_stop' });
    const message = accumulateStream(events);
    expect(toolUses(message.content).length).toBeGreaterThan(0);
    expect(tap.exchanges.at(-1)!.request.json).toMatchObject({ stream: true });
    expect(String(tap.exchanges.at(-1)!.response.headers['content-type'])).toContain('text/event-stream');
  });
});

describe('tpx serve over /v1/responses with the official SDK', () => {
  let proxy: RunningServer;
  let proxyTransport: ModelTransport;

  beforeAll(async () => {
    proxyTransport = createTransport({
      env: {
        TPX_OAUTH_TOKEN: 'real-server-token',
        TPX_BASE_URL: `${tap.url}/v1`,
        TPX_DIALECT: 'llamacpp',
        TPX_WIRE: 'responses',
      },
      maxRetries: 0,
    });
    proxy = await startServer({ transport: proxyTransport, port: 0, logger: pino({ level: 'silent' }) });
  });

  afterAll(async () => {
    await proxy?.close();
    await proxyTransport?.close();
  });

  it('completes a tool round trip, streamed and not, with every id paired', async () => {
    const client = new Anthropic({ baseURL: proxy.url, apiKey: 'client-key', maxRetries: 0 });
    const question = { role: 'user' as const, content: 'Weather in Lima?' };
    const first = await client.messages
      .stream({
        model: 'tiny',
        max_tokens: 300,
        tools: [weatherTool],
        tool_choice: { type: 'any' },
        messages: [question],
      })
      .finalMessage();
    const calls = first.content.filter((block) => block.type === 'tool_use');
    expect(calls.length).toBeGreaterThan(0);

    const second = await client.messages.create({
      model: 'tiny',
      max_tokens: 300,
      tools: [weatherTool],
      messages: [
        question,
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: calls.map((call) => ({
            type: 'tool_result' as const,
            tool_use_id: call.id,
            content: '20 C',
          })),
        },
      ],
    });
    expect(second.type).toBe('message');
    expect(second.role).toBe('assistant');
    const sent = tap.exchanges.at(-1)!.request;
    expect(sent.url).toBe('/v1/responses');
    const input = (sent.json as { input: { type: string; call_id?: string }[] }).input;
    expect(input.filter((item) => item.type === 'function_call_output').map((item) => item.call_id)).toEqual(
      calls.map((call) => call.id),
    );
  });
});

describe('the tpx serve command with --wire responses, and the official SDK', () => {
  it('completes a tool round trip over /v1/responses against llama.cpp, every call answered by its id', async () => {
    // The proxy maps names against the upstream's list: send every name to the one model it serves.
    const listed = (await (await fetch(`${server.url}/v1/models`)).json()) as { data: { id: string }[] };
    const before = tap.exchanges.length;
    const serve = await startTpxServe(
      [
        ...[
          '--wire',
          'responses',
          '--dialect',
          'llamacpp',
          '--base-url',
          `${tap.url}/v1`,
          '--token',
          'local',
        ],
        ...['--model-map', `*=${listed.data[0]!.id}`],
      ],
      {},
    );
    try {
      expect(serve.stderr()).toMatch(/wire: responses \(TPX_WIRE is set\)/);
      const client = new Anthropic({ baseURL: serve.url, apiKey: 'client-key', maxRetries: 0 });
      const question = { role: 'user' as const, content: 'Weather in Quito?' };
      const first = await client.messages.create({
        model: 'tiny',
        max_tokens: 300,
        tools: [weatherTool],
        tool_choice: { type: 'any' },
        messages: [question],
      });
      const calls = first.content.filter((block) => block.type === 'tool_use');
      expect(calls.length).toBeGreaterThan(0);
      const second = await client.messages
        .stream({
          model: 'tiny',
          max_tokens: 300,
          tools: [weatherTool],
          messages: [
            question,
            { role: 'assistant', content: first.content },
            {
              role: 'user',
              content: calls.map((call) => ({
                type: 'tool_result' as const,
                tool_use_id: call.id,
                content: '18 C',
              })),
            },
          ],
        })
        .finalMessage();
      expect(second.role).toBe('assistant');
      const posts = tap.exchanges.slice(before).filter((exchange) => exchange.request.method === 'POST');
      expect(posts.map((exchange) => exchange.request.url)).toEqual(['/v1/responses', '/v1/responses']);
      const input = (posts[1]!.request.json as { input: { type: string; call_id?: string }[] }).input;
      expect(input.filter((item) => item.type === 'function_call').map((item) => item.call_id)).toEqual(
        calls.map((call) => call.id),
      );
      expect(
        input.filter((item) => item.type === 'function_call_output').map((item) => item.call_id),
      ).toEqual(calls.map((call) => call.id));
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  });
});
