/**
 * Tool input is data, whatever its keys. An input with `__proto__`, `constructor` and `prototype` keys
 * survives translation both ways (Messages → Chat Completions in a request's history, Chat Completions →
 * Messages in an answer, whole and streamed) and the native path, as plain own properties, equal to what
 * was sent, without touching `Object.prototype`.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTransport, type Message, type MessagesRequest, type ModelTransport } from '../../src/index.js';
import { accumulateStream } from '../helpers/accumulate-stream.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import {
  startScriptedServer,
  step,
  type RecordedRequest,
  type ScriptedServer,
} from '../helpers/scripted-server.js';

/** Built by JSON.parse: in an object literal, `__proto__` would set the prototype instead of a key. */
const HOSTILE_JSON =
  '{"__proto__":{"polluted":"yes","isAdmin":true},"constructor":{"prototype":{"polluted":"yes"}},"prototype":{"polluted":"yes"},"city":"Paris"}';
const hostileInput = (): Record<string, unknown> => JSON.parse(HOSTILE_JSON) as Record<string, unknown>;

function expectUnpolluted(): void {
  expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  expect(({} as Record<string, unknown>)['isAdmin']).toBeUndefined();
  expect(Object.prototype).not.toHaveProperty('polluted');
  expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
}

/** The input is the hostile JSON as own keys, with an ordinary prototype. */
function expectHostileData(input: unknown): void {
  expect(typeof input).toBe('object');
  const record = input as Record<string, unknown>;
  expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
  expect(Object.keys(record)).toEqual(['__proto__', 'constructor', 'prototype', 'city']);
  // Key order and values, own `__proto__` included: JSON.stringify writes own properties only.
  expect(JSON.stringify(record)).toBe(HOSTILE_JSON);
  expect(record['isAdmin']).toBeUndefined();
  expectUnpolluted();
}

const TOOL = {
  name: 'lookup',
  description: 'Looks things up',
  input_schema: JSON.parse(
    '{"type":"object","properties":{"__proto__":{"type":"object"},"constructor":{"type":"object"},"prototype":{"type":"object"},"city":{"type":"string"}}}',
  ) as Record<string, unknown>,
};

/** A request whose history holds a tool call with the hostile input, answered. */
function historyRequest(stream = false): MessagesRequest {
  return {
    model: 'claude-test',
    max_tokens: 64,
    stream,
    tools: [TOOL],
    messages: [
      { role: 'user', content: 'Look it up' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_01Hostile', name: 'lookup', input: hostileInput() }],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_01Hostile', content: HOSTILE_JSON }],
      },
    ],
  };
}

function openAiAnswer(stream: boolean) {
  const call = {
    index: 0,
    id: 'call_hostile',
    type: 'function',
    function: { name: 'lookup', arguments: HOSTILE_JSON },
  };
  if (!stream) {
    return step.json(
      {
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: null, tool_calls: [call] },
            finish_reason: 'tool_calls',
          },
        ],
      },
      { headers: { connection: 'close' } },
    );
  }
  // The arguments arrive in fragments that split the hostile keys.
  const pieces = [HOSTILE_JSON.slice(0, 5), HOSTILE_JSON.slice(5, 40), HOSTILE_JSON.slice(40)];
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  return step.sse(
    [
      chunk({ role: 'assistant', tool_calls: [{ ...call, function: { name: 'lookup', arguments: '' } }] }),
      ...pieces.map((arguments_) =>
        chunk({ tool_calls: [{ index: 0, function: { arguments: arguments_ } }] }),
      ),
      chunk({}, 'tool_calls'),
      'data: [DONE]\n\n',
    ],
    { headers: { connection: 'close' } },
  );
}

function anthropicAnswer(stream: boolean) {
  const start = {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
  if (!stream) {
    return step.text(
      200,
      `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"tool_use","id":"toolu_01H","name":"lookup","input":${HOSTILE_JSON}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`,
      { 'content-type': 'application/json', connection: 'close' },
    );
  }
  const frame = (event: Record<string, unknown>) =>
    `event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`;
  return step.sse(
    [
      frame({ type: 'message_start', message: { ...start, content: [], stop_reason: null } }),
      frame({
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_01H', name: 'lookup', input: {} },
      }),
      frame({
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: HOSTILE_JSON.slice(0, 20) },
      }),
      frame({
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: HOSTILE_JSON.slice(20) },
      }),
      frame({ type: 'content_block_stop', index: 0 }),
      frame({
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { output_tokens: 5 },
      }),
      frame({ type: 'message_stop' }),
    ],
    { headers: { connection: 'close' } },
  );
}

let upstream: ScriptedServer;

beforeAll(async () => {
  upstream = await startScriptedServer((record: RecordedRequest) => {
    const stream = (record.json as { stream?: unknown } | undefined)?.stream === true;
    return record.url.includes('chat/completions') ? openAiAnswer(stream) : anthropicAnswer(stream);
  });
});

afterAll(async () => {
  await upstream.close();
});

afterEach(() => {
  expectUnpolluted();
});

async function streamMessage(transport: ModelTransport, request: MessagesRequest): Promise<Message> {
  const events = [];
  for await (const event of transport.stream(request)) events.push(event);
  return accumulateStream(events);
}

function toolInput(message: { content: readonly unknown[] }): unknown {
  const block = message.content.find((candidate) => (candidate as { type?: unknown }).type === 'tool_use');
  return (block as { input?: unknown } | undefined)?.input;
}

describe.each([
  { name: 'tpx', options: () => ({ tpxToken: 'tpx-pollution-token', tpxBaseUrl: `${upstream.url}/v1` }) },
  {
    name: 'anthropic',
    options: () => ({ anthropicApiKey: 'sk-ant-pollution-key', anthropicBaseUrl: upstream.url }),
  },
])('$name: hostile tool input keys are plain data', ({ name, options }) => {
  let transport: ModelTransport;
  let server: RunningServer;

  beforeAll(async () => {
    transport = createTransport({ env: {}, maxRetries: 0, ...options() });
    server = await startServer({ transport, port: 0, logger: false });
  });
  afterAll(async () => {
    await server.close();
    await transport.close();
  });

  it('sends the input upstream unchanged', async () => {
    const before = upstream.requests.length;
    await transport.send(historyRequest());
    const seen = upstream.requests[before]!;
    if (name === 'tpx') {
      const body = seen.json as {
        messages: { tool_calls?: { function: { arguments: string } }[] }[];
        tools: { function: { parameters: unknown } }[];
      };
      const call = body.messages.find((message) => message.tool_calls !== undefined)!.tool_calls![0]!;
      expectHostileData(JSON.parse(call.function.arguments));
      expect(JSON.stringify(body.tools[0]!.function.parameters)).toBe(JSON.stringify(TOOL.input_schema));
    } else {
      // The native path sends the caller's request as JSON; the keys are in it as written.
      const body = JSON.parse(seen.bodyText) as { messages: { content: unknown }[] };
      const block = (body.messages[1]!.content as { input: unknown }[])[0]!;
      expectHostileData(block.input);
    }
  });

  it('hands the input back as own keys: whole answer', async () => {
    expectHostileData(toolInput(await transport.send(historyRequest())));
  });

  it('hands the input back as own keys: streamed answer', async () => {
    expectHostileData(toolInput(await streamMessage(transport, historyRequest(true))));
  });

  it('hands the input back as own keys through tpx serve, to the official SDK', async () => {
    const client = new Anthropic({ baseURL: server.url, apiKey: 'unused', maxRetries: 0 });
    const params = historyRequest() as unknown as Anthropic.MessageCreateParamsNonStreaming;
    expectHostileData(toolInput(await client.messages.create(params)));
    const stream = client.messages.stream(params);
    expectHostileData(toolInput(await stream.finalMessage()));
  });
});
