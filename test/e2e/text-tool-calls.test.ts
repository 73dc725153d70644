/**
 * Tool calls a model wrote as text reach the caller as `tool_use` blocks: a real llama.cpp answer whose
 * content is a Hermes call (recorded in `test/dialects/__fixtures__/text-tool-calls/`, see
 * `test/real-server/record-text-tool-calls.ts`), and the Mistral and bare-JSON forms, through the
 * library's `send` and `stream` on both wires and through `tpx serve` with the official SDK. On by
 * default for the local-server dialects, off for hosted ones, switched by `tpxTextToolCalls` and
 * `TPX_TEXT_TOOL_CALLS`; a name the request did not offer, or prose after the call, stays text. The
 * next turn pairs the call with its result upstream.
 */
import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { createTransport, type ModelTransport, type TransportOptions } from '../../src/index.js';
import type { Message, MessagesRequest } from '../../src/protocol/messages.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { createProxyMetrics } from '../../src/telemetry/metrics.js';
import { accumulateStream } from '../helpers/accumulate-stream.js';
import { chatAnswer } from '../helpers/chat-answers.js';
import { startScriptedServer, step, type ScriptedServer, type Step } from '../helpers/scripted-server.js';
import { captureLogs } from './serve-support.js';

const FIXTURES = new URL('../dialects/__fixtures__/text-tool-calls/', import.meta.url);
const recordedJson = readFileSync(new URL('hermes.chat.json', FIXTURES), 'utf8');
const recordedStream = readFileSync(new URL('hermes.chat.stream.sse', FIXTURES), 'utf8');
const recordedCity = (
  JSON.parse(recordedJson) as { choices: { message: { content: string } }[] }
).choices[0]!.message.content.match(/"city": "(\w+)"/)![1]!;

const TOOLS = [
  {
    name: 'get_weather',
    description: 'The weather in a city',
    input_schema: {
      type: 'object' as const,
      properties: { city: { type: 'string' }, days: { type: 'integer' } },
      required: ['city'],
    },
  },
  { name: 'read_file', description: 'Reads a file', input_schema: { type: 'object' as const } },
];

const REQUEST: MessagesRequest = {
  model: 'claude-sonnet-4-5',
  max_tokens: 256,
  tools: TOOLS,
  messages: [{ role: 'user', content: 'The weather in Paris?' }],
};

let upstream: ScriptedServer | undefined;
let transport: ModelTransport | undefined;
let proxy: RunningServer | undefined;

afterEach(async () => {
  await proxy?.close();
  await transport?.close();
  await upstream?.close();
  proxy = undefined;
  transport = undefined;
  upstream = undefined;
});

/** A Chat Completions answer whose content is `text`, whole or streamed a few characters a chunk. */
function chatText(text: string, streaming: boolean): Step {
  return chatAnswer({ content: text }, streaming);
}

/** A Responses answer whose one message holds `text`, whole or streamed. */
function responsesText(text: string, streaming: boolean): Step {
  const message = {
    type: 'message',
    id: 'msg_1',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text, annotations: [] }],
  };
  const response = {
    id: 'resp_1',
    object: 'response',
    status: 'completed',
    model: 'served',
    output: [message],
    usage: { input_tokens: 9, output_tokens: 7, total_tokens: 16 },
  };
  if (!streaming) return step.json(response);
  const frame = (event: Record<string, unknown> & { type: string }) =>
    `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
  const pieces = text.match(/[\s\S]{1,4}/g) ?? [];
  return step.sse([
    frame({ type: 'response.created', response: { ...response, status: 'in_progress', output: [] } }),
    frame({ type: 'response.output_item.added', output_index: 0, item: { ...message, content: [] } }),
    ...pieces.map((delta) =>
      frame({
        type: 'response.output_text.delta',
        output_index: 0,
        content_index: 0,
        item_id: 'msg_1',
        delta,
      }),
    ),
    frame({ type: 'response.output_item.done', output_index: 0, item: message }),
    frame({ type: 'response.completed', response }),
  ]);
}

async function transportTo(
  steps: Step[],
  options: Partial<TransportOptions> & { wire?: 'chat' | 'responses' } = {},
): Promise<ModelTransport> {
  upstream = await startScriptedServer(steps);
  const { wire = 'chat', ...rest } = options;
  transport = createTransport({
    env: {},
    tpxToken: 'upstream-token-0123456789',
    tpxBaseUrl: `${upstream.url}/v1`,
    tpxDialect: 'llamacpp',
    tpxWire: wire,
    maxRetries: 0,
    ...rest,
  });
  return transport;
}

/** The message `client.stream` delivers, accumulated. */
async function streamed(client: ModelTransport): Promise<Message> {
  const events = [];
  for await (const event of client.stream(REQUEST)) events.push(event);
  return accumulateStream(events);
}

/** The content without ids (a stream and a whole answer draw their own). */
function shape(message: Message): unknown {
  return {
    content: message.content.map((block) => (block.type === 'tool_use' ? { ...block, id: 'id' } : block)),
    stop_reason: message.stop_reason,
  };
}

describe('a recorded llama.cpp answer with a Hermes call in its text', () => {
  it('is delivered as text and a tool_use with stop_reason tool_use, by send and by stream alike', async () => {
    const client = await transportTo([
      step.json(JSON.parse(recordedJson) as unknown),
      step.sse(recordedStream.split(/(?<=\n\n)/)),
    ]);
    const sent = await client.send(REQUEST);
    expect(shape(sent)).toEqual({
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'id', name: 'get_weather', input: { city: recordedCity } },
      ],
      stop_reason: 'tool_use',
    });
    expect(shape(await streamed(client))).toEqual(shape(sent));
  });

  it('stays text on a hosted dialect, and with tpxTextToolCalls: false', async () => {
    for (const options of [{ tpxDialect: 'openai' }, { tpxTextToolCalls: false }]) {
      const client = await transportTo([step.json(JSON.parse(recordedJson) as unknown)], options);
      const sent = await client.send(REQUEST);
      expect(sent.content).toEqual([
        { type: 'text', text: expect.stringContaining('<tool_call>') as string },
      ]);
      expect(sent.stop_reason).toBe('end_turn');
      await transport!.close();
      await upstream!.close();
    }
  });

  it('is read on a hosted dialect when TPX_TEXT_TOOL_CALLS=on', async () => {
    upstream = await startScriptedServer([step.json(JSON.parse(recordedJson) as unknown)]);
    transport = createTransport({
      env: {
        TPX_OAUTH_TOKEN: 'upstream-token-0123456789',
        TPX_BASE_URL: `${upstream.url}/v1`,
        TPX_DIALECT: 'openai',
        TPX_TEXT_TOOL_CALLS: 'on',
      },
      maxRetries: 0,
    });
    const sent = await transport.send(REQUEST);
    expect(sent.content.map((block) => block.type)).toEqual(['text', 'tool_use']);
  });

  it('refuses a TPX_TEXT_TOOL_CALLS that is neither on nor off, naming the variable', () => {
    expect(() =>
      createTransport({
        env: { TPX_OAUTH_TOKEN: 't', TPX_BASE_URL: 'http://127.0.0.1:9/v1', TPX_TEXT_TOOL_CALLS: 'maybe' },
      }),
    ).toThrow(/TPX_TEXT_TOOL_CALLS must be "on" or "off", got "maybe"/);
  });
});

describe('text-written calls in other formats and on the Responses wire', () => {
  const cases: { name: string; text: string; calls: { name: string; input: unknown }[]; lead?: string }[] = [
    {
      name: 'two Hermes calls after prose',
      text: 'Let me check both.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "days": "3"}}\n</tool_call>\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>',
      lead: 'Let me check both.',
      calls: [
        { name: 'get_weather', input: { city: 'Oslo', days: 3 } },
        { name: 'read_file', input: { path: 'a.txt' } },
      ],
    },
    {
      name: 'Mistral [TOOL_CALLS] with a JSON list',
      text: '[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "b.txt"}}]',
      calls: [{ name: 'read_file', input: { path: 'b.txt' } }],
    },
    {
      name: 'a bare Llama 3 style object with parameters, single-quoted',
      text: "{'name': 'get_weather', 'parameters': {'city': 'Rome'}}",
      calls: [{ name: 'get_weather', input: { city: 'Rome' } }],
    },
  ];
  for (const wire of ['chat', 'responses'] as const) {
    for (const { name, text, calls, lead } of cases) {
      it(`${wire}: ${name} become tool_use blocks, the same whole and streamed`, async () => {
        const answer = wire === 'chat' ? chatText : responsesText;
        const client = await transportTo([answer(text, false), answer(text, true)], { wire });
        const sent = await client.send(REQUEST);
        const expected = {
          content: [
            ...(lead === undefined ? [] : [{ type: 'text', text: lead }]),
            ...calls.map((call) => ({ type: 'tool_use', id: 'id', ...call })),
          ],
          stop_reason: 'tool_use',
        };
        expect(shape(sent)).toEqual(expected);
        expect(shape(await streamed(client))).toEqual(expected);
      });
    }
  }

  for (const [name, text] of [
    ['a tool the request did not offer', '<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>'],
    [
      'an example inside prose',
      'Call it like <tool_call>{"name": "read_file", "arguments": {}}</tool_call> later.',
    ],
    ['a JSON answer that is no call', '{"city": "Paris", "temperature": 21}'],
  ] as const) {
    it(`${name} stays text, whole and streamed`, async () => {
      const client = await transportTo([chatText(text, false), chatText(text, true)]);
      const expected = { content: [{ type: 'text', text }], stop_reason: 'end_turn' };
      expect(shape(await client.send(REQUEST))).toEqual(expected);
      expect(shape(await streamed(client))).toEqual(expected);
    });
  }

  it('without tools in the request, a call-shaped text stays text', async () => {
    const text = '<tool_call>{"name": "read_file", "arguments": {}}</tool_call>';
    const client = await transportTo([chatText(text, false)]);
    const { tools: _tools, ...withoutTools } = REQUEST;
    expect((await client.send(withoutTools)).content).toEqual([{ type: 'text', text }]);
  });
});

describe('the turn after a text-written call', () => {
  it('sends the call back as a tool call paired with its result', async () => {
    const text = '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>';
    const client = await transportTo([chatText(text, false), chatText('Done.', false)]);
    const first = await client.send(REQUEST);
    const call = first.content.find((block) => block.type === 'tool_use')!;
    expect(call.type).toBe('tool_use');
    if (call.type !== 'tool_use') return;
    const second = await client.send({
      ...REQUEST,
      messages: [
        ...REQUEST.messages,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'hello' }] },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'Done.' }]);
    const sent = upstream!.requests[1]!.json as { messages: Record<string, unknown>[] };
    const assistant = sent.messages.find((message) => message['role'] === 'assistant')!;
    const toolCalls = assistant['tool_calls'] as {
      id: string;
      function: { name: string; arguments: string };
    }[];
    expect(toolCalls).toHaveLength(1);
    expect(toolCalls[0]!.function).toEqual({ name: 'read_file', arguments: '{"path":"a.txt"}' });
    const result = sent.messages.find((message) => message['role'] === 'tool')!;
    expect(result['tool_call_id']).toBe(toolCalls[0]!.id);
  });
});

describe('tpx serve', () => {
  it('delivers a text-written call to the SDK, counts it, and logs it at debug level', async () => {
    const text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Lima", "days": "2"}}</tool_call>';
    const client = await transportTo([chatText(text, false), chatText(text, true)]);
    const metrics = createProxyMetrics({ provider: 'tpx', collectProcessMetrics: false });
    const logs = captureLogs();
    proxy = await startServer({ transport: client, port: 0, logger: logs.logger, telemetry: metrics });
    const sdk = new Anthropic({ apiKey: 'unused', baseURL: proxy.url, maxRetries: 0 });
    const params = {
      model: REQUEST.model,
      max_tokens: REQUEST.max_tokens,
      tools: TOOLS,
      messages: [{ role: 'user' as const, content: 'The weather in Paris?' }],
    };
    const created = await sdk.messages.create(params);
    expect(created.stop_reason).toBe('tool_use');
    expect(created.content).toEqual([
      {
        type: 'tool_use',
        id: expect.any(String) as string,
        name: 'get_weather',
        input: { city: 'Lima', days: 2 },
      },
    ]);
    const final = await sdk.messages.stream(params).finalMessage();
    expect(final.content).toEqual([
      {
        type: 'tool_use',
        id: expect.any(String) as string,
        name: 'get_weather',
        input: { city: 'Lima', days: 2 },
      },
    ]);
    expect(final.stop_reason).toBe('tool_use');
    const scrape = await metrics.registry.metrics();
    expect(scrape).toMatch(/tpx_tool_call_repairs_total\{provider="tpx",kind="text-call"\} 2/);
    expect(scrape).toMatch(/tpx_tool_call_repairs_total\{provider="tpx",kind="types"\} 2/);
    const repaired = logs.lines().filter((line) => line['msg'] === 'tool call repaired');
    expect(repaired.map((line) => [line['level'], line['tool'], line['repair']])).toEqual([
      [20, 'get_weather', 'text-call'],
      [20, 'get_weather', 'types'],
      [20, 'get_weather', 'text-call'],
      [20, 'get_weather', 'types'],
    ]);
    expect(logs.text()).not.toContain('Lima');
  });
});
