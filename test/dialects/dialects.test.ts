/**
 * Every dialect profile, end to end: the real transport (`createTransport` with `TPX_OAUTH_TOKEN`,
 * `TPX_BASE_URL` and `TPX_DIALECT`) talks over loopback to a scripted server that answers with the
 * dialect's fixture (recorded where one exists, constructed from the documentation otherwise; see
 * `__fixtures__/SOURCES.md`). Each case checks both directions: the request the server received (URL,
 * path and query, the fields present and absent, tool-call ids) and the Messages result delivered.
 */
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTransport, isTransportError, type ModelTransport } from '../../src/index.js';
import type { ContentBlock, Message, MessageParam, MessagesRequest } from '../../src/protocol/messages.js';
import { accumulateStream } from '../helpers/accumulate-stream.js';
import { createStreamGrammar } from '../../src/protocol/stream-grammar.js';
import { carryThoughtSignature } from '../../src/translate/apply-dialect.js';
import type { DialectName } from '../../src/translate/dialects.js';
import { encodeToolId } from '../../src/translate/tool-id-codec.js';
import { startScriptedServer, step, type ScriptedServer, type Step } from '../helpers/scripted-server.js';

const TOKEN = 'dialect-test-token-7f3a9c1e';
const HISTORY_TOOL_ID = 'toolu_01Weather';

const TOOLS = [
  { name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
  { name: 'weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } },
  { name: 'get_capital', input_schema: { type: 'object', properties: { country: { type: 'string' } } } },
  { name: 'final_result', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
  { name: 'get_current_time', input_schema: { type: 'object', properties: {} } },
];

/**
 * A conversation that exercises every field a dialect may drop: thinking (reasoning effort), a user id,
 * `disable_parallel_tool_use`, a text turn and a tool turn that both carry thinking, and a tool call id
 * from another provider.
 */
function conversation(stream: boolean, extraTurns: MessageParam[] = []): MessagesRequest {
  return {
    model: 'claude-test',
    max_tokens: 512,
    stream,
    thinking: { type: 'enabled', budget_tokens: 8000 },
    metadata: { user_id: 'user-42' },
    tools: TOOLS,
    tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    messages: [
      { role: 'user', content: 'Hello' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Just greet back.', signature: '' },
          { type: 'text', text: 'Hi!' },
        ],
      },
      { role: 'user', content: 'What is the weather in Paris?' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Call the weather tool.', signature: '' },
          { type: 'tool_use', id: HISTORY_TOOL_ID, name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: HISTORY_TOOL_ID, content: 'Sunny, 21 °C' },
          { type: 'text', text: 'Thanks. And once more, please.' },
        ],
      },
      ...extraTurns,
    ],
  };
}

// ---------------------------------------------------------------------------------------------------
// Fixtures

function fixturePath(dialect: DialectName, file: string): URL {
  return new URL(`./__fixtures__/${dialect}/${file}`, import.meta.url);
}

function readFixture(dialect: DialectName, file: string): string {
  return readFileSync(fixturePath(dialect, file), 'utf8');
}

/**
 * The scripted answer for a fixture: a JSON body byte for byte; a recorded `.sse` body frame by frame, as
 * recorded; a `.chunks.jsonl` file as one `data:` frame per line, then `data: [DONE]`.
 */
function fixtureStep(dialect: DialectName, file: string): Step {
  const raw = readFixture(dialect, file);
  if (file.endsWith('.json')) return step.text(200, raw, { 'content-type': 'application/json' });
  if (file.endsWith('.sse')) return step.sse(raw.split(/(?<=\n\n)/));
  const lines = raw.split('\n').filter((line) => line.trim() !== '');
  return step.sse([...lines.map((line) => `data: ${line}\n\n`), 'data: [DONE]\n\n']);
}

/** Gemini's thought signature of a recorded or constructed fixture. */
function signatureIn(dialect: DialectName, file: string, pick: (body: unknown) => unknown): string {
  const raw = readFixture(dialect, file);
  const body: unknown = file.endsWith('.json')
    ? JSON.parse(raw)
    : JSON.parse(
        raw
          .split('\n')
          .find((line) => line.startsWith('data: {'))!
          .slice('data: '.length),
      );
  return pick(body) as string;
}

// ---------------------------------------------------------------------------------------------------
// The cases

type Replay = 'all' | 'tool-turns' | 'none';

interface Expected {
  fixture: string;
  content: ContentBlock[];
  stopReason: Message['stop_reason'];
  usage: { input_tokens: number; output_tokens: number; cache_read_input_tokens?: number };
}

interface DialectCase {
  dialect: DialectName;
  /** Appended to the scripted server's URL to make `TPX_BASE_URL`. */
  basePath: string;
  env?: Record<string, string>;
  /** Path and query every request must go to. */
  path: string;
  maxTokens: 'max_tokens' | 'max_completion_tokens';
  streamOptions: boolean;
  parallelToolCalls: boolean;
  reasoning: 'reasoning_effort' | 'reasoning' | 'none';
  user: boolean;
  replay: Replay;
  /** How the history's `toolu_01Weather` reaches the server. */
  historyToolId: (id: string) => void;
  send: Expected;
  stream: Expected;
}

const keptVerbatim = (id: string) => expect(id).toBe(HISTORY_TOOL_ID);
const toolUse = (id: string, name: string, input: Record<string, unknown>): ContentBlock => ({
  type: 'tool_use',
  id,
  name,
  input,
});
const thinking = (text: string): ContentBlock => ({ type: 'thinking', thinking: text, signature: '' });

const GEMINI_RECORDED_SIGNATURE = signatureIn(
  'gemini',
  'gemini-2.5-pro.tool-call-empty-id.json',
  (body) =>
    (body as { choices: { message: { extra_content: { google: { thought_signature: string } } } }[] })
      .choices[0]!.message.extra_content.google.thought_signature,
);
const GEMINI_STREAM_SIGNATURE = signatureIn(
  'gemini',
  'gemini-2.5-flash.parallel-tool-calls.stream.sse',
  (body) =>
    (
      body as {
        choices: { delta: { tool_calls: { extra_content: { google: { thought_signature: string } } }[] } }[];
      }
    ).choices[0]!.delta.tool_calls[0]!.extra_content.google.thought_signature,
);
const VERTEX_SIGNATURE = signatureIn(
  'vertex',
  'gemini-2.5-flash.tool-call.json',
  (body) =>
    (
      body as {
        choices: {
          message: { tool_calls: { extra_content: { google: { thought_signature: string } } }[] };
        }[];
      }
    ).choices[0]!.message.tool_calls[0]!.extra_content.google.thought_signature,
);
/** The caller's id for a tool call that came with a thought signature. */
const signedId = (providerId: string, signature: string) =>
  encodeToolId(carryThoughtSignature(providerId, signature), 1, () => 'unused');

const CASES: DialectCase[] = [
  {
    dialect: 'openai',
    basePath: '/v1',
    path: '/v1/chat/completions',
    maxTokens: 'max_completion_tokens',
    streamOptions: true,
    parallelToolCalls: true,
    reasoning: 'reasoning_effort',
    user: true,
    replay: 'none',
    historyToolId: keptVerbatim,
    send: {
      fixture: 'gpt-4o-mini.tool-call.json',
      content: [toolUse('call_k2Jv8sQxN4mWp7RtY1bZcD3e', 'get_weather', { city: 'Paris' })],
      stopReason: 'tool_use',
      usage: { input_tokens: 82, output_tokens: 15 },
    },
    stream: {
      fixture: 'gpt-4o-mini.tool-call.stream.sse',
      content: [toolUse('call_ZR5UUuTt3pf61kjwAJIYdVMj', 'get_capital', { country: 'UK' })],
      stopReason: 'tool_use',
      usage: { input_tokens: 53, output_tokens: 15 },
    },
  },
  {
    dialect: 'azure',
    basePath: '',
    env: { TPX_MODEL: 'gpt-4o-east' },
    path: '/openai/deployments/gpt-4o-east/chat/completions?api-version=2024-10-21',
    maxTokens: 'max_completion_tokens',
    streamOptions: true,
    parallelToolCalls: true,
    reasoning: 'reasoning_effort',
    user: true,
    replay: 'none',
    historyToolId: keptVerbatim,
    send: {
      fixture: 'gpt-4o.tool-call.json',
      content: [toolUse('call_Az7pQ2rL9xKm4NvB8sWe1TfY', 'get_weather', { city: 'Paris' })],
      stopReason: 'tool_use',
      usage: { input_tokens: 84, output_tokens: 16 },
    },
    stream: {
      fixture: 'gpt-4o.tool-call.chunks.jsonl',
      content: [toolUse('call_Az8qR3sM0yLn5OwC9tXf2UgZ', 'get_weather', { city: 'Paris' })],
      stopReason: 'tool_use',
      usage: { input_tokens: 84, output_tokens: 16 },
    },
  },
  {
    dialect: 'vllm',
    basePath: '/v1',
    path: '/v1/chat/completions',
    maxTokens: 'max_tokens',
    streamOptions: true,
    parallelToolCalls: true,
    reasoning: 'reasoning_effort',
    user: true,
    replay: 'tool-turns',
    historyToolId: keptVerbatim,
    send: {
      fixture: 'qwen3-8b.tool-call.json',
      content: [
        thinking('The user wants the weather in Paris; call get_weather.'),
        toolUse('chatcmpl-tool-9a8b7c6d5e4f4a3b', 'get_weather', { city: 'Paris' }),
      ],
      stopReason: 'tool_use',
      usage: { input_tokens: 210, output_tokens: 38 },
    },
    stream: {
      fixture: 'qwen3-8b.tool-call.chunks.jsonl',
      content: [
        thinking('Call get_weather for Paris.'),
        toolUse('chatcmpl-tool-1f2e3d4c5b6a4978', 'get_weather', { city: 'Paris' }),
      ],
      stopReason: 'tool_use',
      usage: { input_tokens: 210, output_tokens: 26 },
    },
  },
  {
    dialect: 'llamacpp',
    basePath: '/v1',
    path: '/v1/chat/completions',
    maxTokens: 'max_tokens',
    streamOptions: true,
    parallelToolCalls: true,
    reasoning: 'none',
    user: false,
    replay: 'tool-turns',
    historyToolId: keptVerbatim,
    send: {
      fixture: 'gpt-oss-20b.tool-call.json',
      content: [
        thinking('Need the weather for Paris; use the tool.'),
        toolUse('u5Jq0bWmV8cY2kR7tN3xL9pA1sD4fG6h', 'get_weather', { city: 'Paris' }),
      ],
      stopReason: 'tool_use',
      usage: { input_tokens: 198, output_tokens: 41 },
    },
    stream: {
      fixture: 'gpt-oss-20b.tool-call.chunks.jsonl',
      content: [
        thinking('Need the weather for Paris.'),
        toolUse('r8Kp2mQw5nX9vB3cZ7tY1jH4gF6sL0dA', 'get_weather', { city: 'Paris' }),
      ],
      stopReason: 'tool_use',
      usage: { input_tokens: 198, output_tokens: 41 },
    },
  },
  {
    dialect: 'ollama',
    basePath: '/v1',
    path: '/v1/chat/completions',
    maxTokens: 'max_tokens',
    streamOptions: true,
    parallelToolCalls: false,
    reasoning: 'reasoning_effort',
    user: false,
    replay: 'none',
    historyToolId: keptVerbatim,
    send: {
      fixture: 'gpt-oss-20b.cloud.tool-call.json',
      content: [
        thinking(
          (
            JSON.parse(readFixture('ollama', 'gpt-oss-20b.cloud.tool-call.json')) as {
              choices: { message: { reasoning: string } }[];
            }
          ).choices[0]!.message.reasoning,
        ),
        toolUse('call_o2vnpxrw', 'final_result', { city: 'Paris', country: 'France' }),
      ],
      stopReason: 'tool_use',
      usage: { input_tokens: 206, output_tokens: 194 },
    },
    stream: {
      // Both calls arrive whole on index 0 without ids: two distinct tool_use blocks, generated ids.
      fixture: 'qwen3-8b.parallel-tool-calls.chunks.jsonl',
      content: [
        thinking('Two cities, two calls.'),
        toolUse('tpx_ggen2', 'get_weather', { city: 'Paris' }),
        toolUse('tpx_ggen3', 'get_weather', { city: 'Rome' }),
      ],
      stopReason: 'tool_use',
      usage: { input_tokens: 180, output_tokens: 52 },
    },
  },
  {
    dialect: 'deepseek',
    basePath: '/v1',
    path: '/v1/chat/completions',
    maxTokens: 'max_tokens',
    streamOptions: true,
    parallelToolCalls: false,
    reasoning: 'reasoning_effort',
    user: false,
    replay: 'tool-turns',
    historyToolId: keptVerbatim,
    send: {
      fixture: 'deepseek-reasoner.tool-call.json',
      content: [
        thinking('The user asks for the weather in Paris. Call get_weather.'),
        toolUse('call_00_Vq3mZ8xK1nP4wT7yR2cB5fJ9', 'get_weather', { city: 'Paris' }),
      ],
      stopReason: 'tool_use',
      usage: { input_tokens: 21, output_tokens: 57, cache_read_input_tokens: 320 },
    },
    stream: {
      fixture: 'deepseek-reasoner.tool-call.chunks.jsonl',
      content: [
        thinking(
          'The user is asking for the weather in San Francisco. I need to use the weather tool to get this ' +
            'information. Let me invoke the weather tool with the location parameter set to "San Francisco".',
        ),
        toolUse('call_00_ioIn7yN9p1ZOMNpDLwd4MgAF', 'weather', { location: 'San Francisco' }),
      ],
      stopReason: 'tool_use',
      usage: { input_tokens: 19, output_tokens: 83, cache_read_input_tokens: 320 },
    },
  },
  {
    dialect: 'mistral',
    basePath: '/v1',
    path: '/v1/chat/completions',
    maxTokens: 'max_tokens',
    streamOptions: false,
    parallelToolCalls: true,
    reasoning: 'none',
    user: false,
    replay: 'none',
    historyToolId: (id) => expect(id).toMatch(/^[A-Za-z0-9]{9}$/),
    send: {
      fixture: 'mistral-small.tool-call.json',
      content: [toolUse('D681PevKs', 'get_weather', { city: 'Paris' })],
      stopReason: 'tool_use',
      usage: { input_tokens: 126, output_tokens: 21 },
    },
    stream: {
      fixture: 'mistral-small.tool-call.chunks.jsonl',
      content: [toolUse('gSIMJiOkT', 'weather', { location: 'San Francisco' })],
      stopReason: 'tool_use',
      usage: { input_tokens: 124, output_tokens: 22 },
    },
  },
  {
    dialect: 'kimi',
    basePath: '/v1',
    path: '/v1/chat/completions',
    maxTokens: 'max_tokens',
    streamOptions: true,
    parallelToolCalls: false,
    reasoning: 'none',
    user: false,
    replay: 'tool-turns',
    historyToolId: keptVerbatim,
    send: {
      fixture: 'kimi-k2-thinking.tool-call.json',
      content: [
        thinking('The user wants the weather in Paris, so I call get_weather.'),
        toolUse(
          encodeToolId('functions.get_weather:0', 1, () => 'unused'),
          'get_weather',
          { city: 'Paris' },
        ),
      ],
      stopReason: 'tool_use',
      usage: { input_tokens: 152, output_tokens: 44 },
    },
    stream: {
      // The usage arrives inside choices[0] of the finish chunk; the dialect lifts it.
      fixture: 'kimi-k2-thinking.tool-call.chunks.jsonl',
      content: [
        thinking('Weather for Paris: call the tool.'),
        toolUse(
          encodeToolId('functions.get_weather:0', 1, () => 'unused'),
          'get_weather',
          { city: 'Paris' },
        ),
      ],
      stopReason: 'tool_use',
      usage: { input_tokens: 152, output_tokens: 44 },
    },
  },
  {
    dialect: 'groq',
    basePath: '/openai/v1',
    path: '/openai/v1/chat/completions',
    maxTokens: 'max_tokens',
    streamOptions: true,
    parallelToolCalls: true,
    reasoning: 'reasoning_effort',
    user: true,
    replay: 'none',
    historyToolId: keptVerbatim,
    send: {
      fixture: 'llama-3.3-70b.tool-call.json',
      content: [toolUse('r4z7c1v9k', 'get_weather', { city: 'Paris' })],
      stopReason: 'tool_use',
      usage: { input_tokens: 212, output_tokens: 17 },
    },
    stream: {
      fixture: 'llama-3.3-70b.tool-call.chunks.jsonl',
      content: [toolUse('tk85n1k4m', 'weather', {})],
      stopReason: 'tool_use',
      usage: { input_tokens: 210, output_tokens: 15 },
    },
  },
  {
    dialect: 'openrouter',
    basePath: '/api/v1',
    path: '/api/v1/chat/completions',
    maxTokens: 'max_tokens',
    streamOptions: true,
    parallelToolCalls: true,
    reasoning: 'reasoning',
    user: true,
    replay: 'none',
    historyToolId: keptVerbatim,
    send: {
      fixture: 'openai-gpt-4o-mini.tool-call.json',
      content: [toolUse('call_Or4pQ8mZ2xK7nV1wT5yR9cB3', 'get_weather', { city: 'Paris' })],
      stopReason: 'tool_use',
      usage: { input_tokens: 81, output_tokens: 15 },
    },
    stream: {
      fixture: 'openai-gpt-4o-mini.tool-call.stream.sse',
      content: [toolUse('call_Ps5oB0zS3pX6yV9aU4dC8eF2', 'get_weather', { city: 'Paris' })],
      stopReason: 'tool_use',
      usage: { input_tokens: 81, output_tokens: 15 },
    },
  },
  {
    dialect: 'gemini',
    basePath: '/v1beta/openai',
    path: '/v1beta/openai/chat/completions',
    maxTokens: 'max_tokens',
    streamOptions: true,
    parallelToolCalls: false,
    reasoning: 'reasoning_effort',
    user: false,
    replay: 'none',
    historyToolId: keptVerbatim,
    send: {
      // Recorded: an empty id, and the signature on the message (Gemini 2.5).
      fixture: 'gemini-2.5-pro.tool-call-empty-id.json',
      content: [toolUse(signedId('', GEMINI_RECORDED_SIGNATURE), 'get_current_time', {})],
      stopReason: 'tool_use',
      usage: { input_tokens: 35, output_tokens: 12 },
    },
    stream: {
      // Two whole calls on index 0 with empty ids, the first signed, finish_reason "stop".
      fixture: 'gemini-2.5-flash.parallel-tool-calls.stream.sse',
      content: [
        toolUse(signedId('', GEMINI_STREAM_SIGNATURE), 'get_weather', { city: 'Paris' }),
        toolUse('tpx_ggen2', 'get_weather', { city: 'Rome' }),
      ],
      stopReason: 'tool_use',
      usage: { input_tokens: 61, output_tokens: 24 },
    },
  },
  {
    dialect: 'vertex',
    basePath: '/v1/projects/tpx-test/locations/us-central1',
    env: { TPX_MODEL: 'google/gemini-2.5-flash' },
    path: '/v1/projects/tpx-test/locations/us-central1/endpoints/openapi/chat/completions',
    maxTokens: 'max_tokens',
    streamOptions: true,
    parallelToolCalls: false,
    reasoning: 'reasoning_effort',
    user: false,
    replay: 'none',
    historyToolId: keptVerbatim,
    send: {
      fixture: 'gemini-2.5-flash.tool-call.json',
      content: [
        toolUse(signedId('function-call-4791013652874622001', VERTEX_SIGNATURE), 'get_weather', {
          city: 'Paris',
        }),
        toolUse('function-call-4791013652874622002', 'get_weather', { city: 'Rome' }),
      ],
      stopReason: 'tool_use',
      usage: { input_tokens: 64, output_tokens: 30 },
    },
    stream: {
      fixture: 'gemini-2.5-flash.tool-call.stream.sse',
      content: [
        toolUse(signedId('function-call-5802124763985733001', VERTEX_SIGNATURE), 'get_weather', {
          city: 'Paris',
        }),
      ],
      stopReason: 'tool_use',
      usage: { input_tokens: 64, output_tokens: 15 },
    },
  },
];

// ---------------------------------------------------------------------------------------------------
// Harness

let server: ScriptedServer;
const transports: ModelTransport[] = [];

beforeAll(async () => {
  server = await startScriptedServer();
});
afterAll(async () => {
  await server.close();
});
afterEach(async () => {
  await Promise.all(transports.splice(0).map((transport) => transport.close()));
});

function transportFor(
  dialect: DialectName,
  basePath: string,
  env: Record<string, string> = {},
): ModelTransport {
  let counter = 0;
  const transport = createTransport({
    env: { TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL: `${server.url}${basePath}`, TPX_DIALECT: dialect, ...env },
    maxRetries: 0,
    generateId: () => `gen${++counter}`,
  });
  transports.push(transport);
  return transport;
}

/** Runs one exchange; a stream is checked against the event grammar and folded into its message. */
async function exchange(transport: ModelTransport, request: MessagesRequest): Promise<Message> {
  if (request.stream !== true) return transport.send(request);
  const grammar = createStreamGrammar();
  const events = [];
  for await (const event of transport.stream(request)) {
    expect(grammar.accept(event)).toBeUndefined();
    events.push(event);
  }
  expect(grammar.end()).toBeUndefined();
  return accumulateStream(events);
}

interface UpstreamMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  reasoning_content?: string;
  tool_calls?: { id: string; function: { name: string }; extra_content?: unknown }[];
}
interface UpstreamBody {
  [key: string]: unknown;
  messages: UpstreamMessage[];
}

function lastBody(): UpstreamBody {
  return server.requests.at(-1)!.json as UpstreamBody;
}

function assistantTurns(body: UpstreamBody): UpstreamMessage[] {
  return body.messages.filter((message) => message.role === 'assistant');
}

/** Checks the request the server received against the dialect's expected shape. */
function checkOutbound(dialectCase: DialectCase, streaming: boolean): void {
  const recorded = server.requests.at(-1)!;
  expect(recorded.method).toBe('POST');
  expect(recorded.url).toBe(dialectCase.path);
  expect(recorded.headers['authorization']).toBe(`Bearer ${TOKEN}`);
  expect(recorded.headers['accept']).toBe(streaming ? 'text/event-stream' : 'application/json');
  const body = lastBody();
  expect(body['model']).toBe(dialectCase.env?.['TPX_MODEL'] ?? 'claude-test');

  const otherMaxTokens = dialectCase.maxTokens === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens';
  expect(body[dialectCase.maxTokens]).toBe(512);
  expect(body).not.toHaveProperty(otherMaxTokens);
  if (streaming && dialectCase.streamOptions) expect(body['stream_options']).toEqual({ include_usage: true });
  else expect(body).not.toHaveProperty('stream_options');
  if (dialectCase.parallelToolCalls) expect(body['parallel_tool_calls']).toBe(false);
  else expect(body).not.toHaveProperty('parallel_tool_calls');
  if (dialectCase.reasoning === 'reasoning_effort') expect(body['reasoning_effort']).toBe('medium');
  else expect(body).not.toHaveProperty('reasoning_effort');
  if (dialectCase.reasoning === 'reasoning') expect(body['reasoning']).toEqual({ effort: 'medium' });
  else expect(body).not.toHaveProperty('reasoning');
  if (dialectCase.user) expect(body['user']).toBe('user-42');
  else expect(body).not.toHaveProperty('user');

  const [textTurn, toolTurn] = assistantTurns(body);
  expect(textTurn?.reasoning_content).toBe(dialectCase.replay === 'all' ? 'Just greet back.' : undefined);
  expect(toolTurn?.reasoning_content).toBe(
    dialectCase.replay === 'none' ? undefined : 'Call the weather tool.',
  );

  const historyCallId = toolTurn!.tool_calls![0]!.id;
  dialectCase.historyToolId(historyCallId);
  const answer = body.messages.find((message) => message.role === 'tool');
  expect(answer?.tool_call_id).toBe(historyCallId);
}

// ---------------------------------------------------------------------------------------------------
// Tests

describe.each(CASES)('the $dialect dialect', (dialectCase) => {
  const { dialect } = dialectCase;

  it(`answers a tool call without streaming (${dialectCase.send.fixture})`, async () => {
    const transport = transportFor(dialect, dialectCase.basePath, dialectCase.env);
    expect(transport.selection.dialect).toEqual({ name: dialect, reason: 'TPX_DIALECT is set' });
    server.push(fixtureStep(dialect, dialectCase.send.fixture));
    const message = await exchange(transport, conversation(false));
    checkOutbound(dialectCase, false);
    expect(message.content).toEqual(dialectCase.send.content);
    expect(message.stop_reason).toBe(dialectCase.send.stopReason);
    expect(message.model).toBe('claude-test');
    expect(message.usage).toMatchObject(dialectCase.send.usage);
  });

  it(`streams a tool call (${dialectCase.stream.fixture})`, async () => {
    const transport = transportFor(dialect, dialectCase.basePath, dialectCase.env);
    server.push(fixtureStep(dialect, dialectCase.stream.fixture));
    const message = await exchange(transport, conversation(true));
    checkOutbound(dialectCase, true);
    expect(message.content).toEqual(dialectCase.stream.content);
    expect(message.stop_reason).toBe(dialectCase.stream.stopReason);
    expect(message.usage).toMatchObject(dialectCase.stream.usage);
  });
});

/** The next turn after `message`: its content as the assistant turn, and a result for every tool call. */
function answering(message: Message): MessageParam[] {
  const results = message.content
    .filter((block): block is Extract<ContentBlock, { type: 'tool_use' }> => block.type === 'tool_use')
    .map((block) => ({ type: 'tool_result' as const, tool_use_id: block.id, content: 'done' }));
  return [
    { role: 'assistant', content: message.content },
    { role: 'user', content: results },
  ];
}

describe('tool-call ids across a turn', () => {
  it('Kimi: functions.name:N ids come back to the server verbatim, with the reasoning of that tool turn', async () => {
    const transport = transportFor('kimi', '/v1');
    server.push(fixtureStep('kimi', 'kimi-k2-thinking.tool-call.json'));
    const first = await exchange(transport, conversation(false));
    const callerId = (first.content[1] as { id: string }).id;
    expect(callerId).toMatch(/^[A-Za-z0-9_-]+$/);

    server.push(step.json(textCompletion('It is sunny.')));
    await exchange(transport, conversation(false, answering(first)));
    const body = lastBody();
    const lastToolTurn = assistantTurns(body).at(-1)!;
    expect(lastToolTurn.tool_calls!.map((call) => call.id)).toEqual(['functions.get_weather:0']);
    expect(lastToolTurn.reasoning_content).toBe(
      'The user wants the weather in Paris, so I call get_weather.',
    );
    expect(body.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'functions.get_weather:0',
      content: 'done',
    });
  });

  it('DeepSeek: the streamed reasoning is replayed on the tool turn it belongs to', async () => {
    const transport = transportFor('deepseek', '/v1');
    server.push(fixtureStep('deepseek', 'deepseek-reasoner.tool-call.chunks.jsonl'));
    const first = await exchange(transport, conversation(true));
    server.push(fixtureStep('deepseek', 'deepseek-reasoner.tool-call.json'));
    await exchange(transport, conversation(true, answering(first)));
    const lastToolTurn = assistantTurns(lastBody()).at(-1)!;
    expect(lastToolTurn.tool_calls![0]!.id).toBe('call_00_ioIn7yN9p1ZOMNpDLwd4MgAF');
    expect(lastToolTurn.reasoning_content).toBe((first.content[0] as { thinking: string }).thinking);
  });

  it('Mistral: its own ids pass unchanged, foreign ids get the same 9-character stand-in every time', async () => {
    const transport = transportFor('mistral', '/v1');
    server.push(fixtureStep('mistral', 'mistral-small.tool-call.chunks.jsonl'));
    const first = await exchange(transport, conversation(true));
    const followUp = conversation(false, answering(first));

    server.push(step.json(textCompletion('Foggy.')), step.json(textCompletion('Still foggy.')));
    await exchange(transport, followUp);
    const once = lastBody();
    await exchange(transport, followUp);
    const twice = lastBody();
    const ids = (body: UpstreamBody) =>
      assistantTurns(body).flatMap((turn) => (turn.tool_calls ?? []).map((call) => call.id));
    expect(ids(once)).toEqual(ids(twice));
    const [foreign, own] = ids(once);
    expect(own).toBe('gSIMJiOkT');
    expect(foreign).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(foreign).not.toBe(HISTORY_TOOL_ID);
    const answers = once.messages
      .filter((message) => message.role === 'tool')
      .map((message) => message.tool_call_id);
    expect(answers).toEqual([foreign, own]);
  });

  it('Gemini: the thought signature of a call without an id is echoed on the next turn', async () => {
    const transport = transportFor('gemini', '/v1beta/openai');
    server.push(fixtureStep('gemini', 'gemini-2.5-pro.tool-call-empty-id.json'));
    const first = await exchange(transport, conversation(false));
    server.push(step.json(textCompletion('It is 12:00.')));
    await exchange(transport, conversation(false, answering(first)));
    const body = lastBody();
    const call = assistantTurns(body).at(-1)!.tool_calls![0]!;
    expect(call.extra_content).toEqual({ google: { thought_signature: GEMINI_RECORDED_SIGNATURE } });
    expect(call.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(body.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: call.id, content: 'done' });
  });

  it('Vertex: streamed parallel calls keep their ids, and only the signed one carries the signature back', async () => {
    const transport = transportFor('vertex', '/v1/projects/tpx-test/locations/us-central1', {
      TPX_MODEL: 'google/gemini-2.5-flash',
    });
    server.push(fixtureStep('vertex', 'gemini-2.5-flash.tool-call.json'));
    const first = await exchange(transport, conversation(false));
    server.push(step.json(textCompletion('Sunny in both.')));
    await exchange(transport, conversation(false, answering(first)));
    const body = lastBody();
    const calls = assistantTurns(body).at(-1)!.tool_calls!;
    expect(calls.map((call) => call.id)).toEqual([
      'function-call-4791013652874622001',
      'function-call-4791013652874622002',
    ]);
    expect(calls[0]!.extra_content).toEqual({ google: { thought_signature: VERTEX_SIGNATURE } });
    expect(calls[1]).not.toHaveProperty('extra_content');
    const answers = body.messages
      .filter((message) => message.role === 'tool')
      .map((message) => message.tool_call_id);
    expect(answers.slice(-2)).toEqual([
      'function-call-4791013652874622001',
      'function-call-4791013652874622002',
    ]);
  });
});

describe('recorded streams beyond tool calls', () => {
  it('Azure: the prompt-filter chunk with empty id and no choices is skipped (recorded model-router stream)', async () => {
    const transport = transportFor('azure', '', { TPX_MODEL: 'router' });
    server.push(fixtureStep('azure', 'gpt-5-nano.model-router.chunks.jsonl'));
    const message = await exchange(transport, conversation(true));
    expect(server.requests.at(-1)!.url).toBe(
      '/openai/deployments/router/chat/completions?api-version=2024-10-21',
    );
    expect(message.content).toEqual([{ type: 'text', text: 'Capital of Denmark.' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({ input_tokens: 15, output_tokens: 78 });
  });

  it('Azure: TPX_AZURE_API_VERSION sets the api-version query parameter', async () => {
    const transport = transportFor('azure', '/openai/deployments/chat-west', {
      TPX_AZURE_API_VERSION: '2025-04-01-preview',
    });
    server.push(fixtureStep('azure', 'gpt-4o.tool-call.json'));
    await exchange(transport, conversation(false));
    expect(server.requests.at(-1)!.url).toBe(
      '/openai/deployments/chat-west/chat/completions?api-version=2025-04-01-preview',
    );
  });

  it('OpenRouter: SSE comments are skipped and reasoning becomes a thinking block (recorded)', async () => {
    const transport = transportFor('openrouter', '/api/v1');
    server.push(fixtureStep('openrouter', 'claude-sonnet-4.5.reasoning.stream.sse'));
    const message = await exchange(transport, conversation(true));
    expect(message.content).toEqual([
      thinking('This is a simple arithmetic question. 2+2 equals 4.'),
      { type: 'text', text: '2 + 2 = 4' },
    ]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({ input_tokens: 43, output_tokens: 36 });
  });

  it('OpenRouter: an error inside an HTTP 200 stream ends the stream with MODEL_EHTTP (recorded)', async () => {
    const transport = transportFor('openrouter', '/api/v1');
    server.push(fixtureStep('openrouter', 'minimax-m2.stream-error.sse'));
    const types: string[] = [];
    const failure = await (async () => {
      for await (const event of transport.stream(conversation(true))) types.push(event.type);
    })().catch((error: unknown) => error);
    expect(types[0]).toBe('message_start');
    expect(isTransportError(failure) && failure.code).toBe('MODEL_EHTTP');
    expect((failure as Error).message).toContain('Token limit reached');
    expect(types).not.toContain('message_stop');
  });

  it('Groq: an event: error frame mid-stream ends the stream with MODEL_EHTTP (recorded)', async () => {
    const transport = transportFor('groq', '/openai/v1');
    server.push(fixtureStep('groq', 'gpt-oss-120b.tool-use-failed.stream.sse'));
    const failure = await (async () => {
      for await (const event of transport.stream(conversation(true))) void event;
    })().catch((error: unknown) => error);
    expect(isTransportError(failure) && failure.code).toBe('MODEL_EHTTP');
    expect((failure as Error).message).toContain('tool_use_failed');
    expect(isTransportError(failure) && failure.body.error.type).toBe('invalid_request_error');
  });
});

describe('choosing a dialect', () => {
  it('refuses an unknown TPX_DIALECT with MODEL_ECONFIG listing the valid ones', () => {
    let thrown: unknown;
    try {
      createTransport({
        env: { TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL: `${server.url}/v1`, TPX_DIALECT: 'bedrock' },
      });
    } catch (error) {
      thrown = error;
    }
    expect(isTransportError(thrown) && thrown.code).toBe('MODEL_ECONFIG');
    expect((thrown as Error).message).toMatch(
      /TPX_DIALECT .*"bedrock".*openai, vllm, llamacpp, ollama, deepseek, mistral, kimi, groq, openrouter, gemini, azure, vertex/,
    );
    expect((thrown as Error).message).not.toContain(TOKEN);
  });

  it('uses the generic profile for a loopback server, and the tpxDialect option over TPX_DIALECT', () => {
    const generic = createTransport({ env: { TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL: `${server.url}/v1` } });
    const chosen = createTransport({
      tpxDialect: 'mistral',
      env: { TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL: `${server.url}/v1`, TPX_DIALECT: 'openai' },
    });
    transports.push(generic, chosen);
    expect(generic.selection.dialect?.name).toBe('openai-generic');
    expect(generic.selection.dialect?.reason).toContain('127.0.0.1');
    expect(chosen.selection.dialect).toEqual({ name: 'mistral', reason: 'the tpxDialect option is set' });
  });

  it('detects the dialect from a known host, and TPX_DIALECT overrides the detection', () => {
    const detected = createTransport({
      env: { TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL: 'https://api.mistral.ai/v1' },
    });
    const overridden = createTransport({
      env: { TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL: 'https://api.mistral.ai/v1', TPX_DIALECT: 'vllm' },
    });
    transports.push(detected, overridden);
    expect(detected.selection.dialect).toEqual({
      name: 'mistral',
      reason: 'detected from the TPX_BASE_URL host api.mistral.ai',
    });
    expect(overridden.selection.dialect?.name).toBe('vllm');
  });
});

/** A plain text chat completion, for the turns after a tool call. */
function textCompletion(text: string) {
  return {
    id: 'chatcmpl-followup',
    object: 'chat.completion',
    created: 1,
    model: 'upstream',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 300, completion_tokens: 5, total_tokens: 305 },
  };
}
