/**
 * Streaming end to end: every recorded upstream stream replayed over real HTTP through the transport,
 * the SSE decoder fed each recording split at every byte offset, and the official SDK's stream
 * accumulator (`messages.stream(...).finalMessage()`) used through `tpx serve` for text, interleaved
 * parallel tool calls and reasoning.
 */
import Anthropic from '@anthropic-ai/sdk';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTransportError, type TransportError } from '../../src/errors.js';
import { createTransport } from '../../src/transport/create-transport.js';
import type { ModelTransport } from '../../src/transport/types.js';
import type { Message, MessageStreamEvent } from '../../src/protocol/messages.js';
import { accumulateStream } from '../helpers/accumulate-stream.js';
import { createStreamGrammar } from '../../src/protocol/stream-grammar.js';
import { readSse, type SseMessage } from '../../src/providers/read-sse.js';
import { Cancellation } from '../../src/providers/cancellation.js';
import { ResponseBody, type AttemptContext, type HttpResponse } from '../../src/providers/http-exchange.js';
import { DEFAULT_DEADLINES } from '../../src/transport/create-transport.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { openAiSse, startScriptedServer, step, type ScriptedServer } from '../helpers/scripted-server.js';

const FIXTURES = fileURLToPath(
  new URL('../../src/translate/__fixtures__/upstream-openai-compat/', import.meta.url),
);
const ANTHROPIC_FIXTURES = fileURLToPath(
  new URL('../../src/protocol/__fixtures__/reference-anthropic/anthropic-sdk-ts/', import.meta.url),
);
const TOKEN = 'stream-over-http-token';

function walk(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

/** The raw SSE body of a recording: `.sse` as recorded, `.chunks.jsonl` wrapped as OpenAI frames. */
function sseBody(path: string): string {
  if (path.endsWith('.sse')) return readFileSync(path, 'utf8');
  const chunks = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as unknown);
  return openAiSse(chunks).join('');
}

const streamFixtures = walk(FIXTURES)
  .filter((path) => path.endsWith('.sse') || path.endsWith('.chunks.jsonl'))
  .sort();

/** Recordings of upstream failures: they must end in an error after a valid prefix. */
const ERROR_RECORDINGS = new Set([
  'groq/gpt-oss-120b.tool-use-failed.stream.sse',
  'openrouter/minimax-m2.stream-error.sse',
]);

const request = {
  model: 'claude-test',
  max_tokens: 256,
  messages: [{ role: 'user' as const, content: 'go' }],
  tools: [
    { name: 'get_weather', input_schema: { type: 'object' as const } },
    { name: 'get_capital', input_schema: { type: 'object' as const } },
  ],
};

async function collect(
  iterable: AsyncIterable<MessageStreamEvent>,
): Promise<{ events: MessageStreamEvent[]; error: TransportError | undefined }> {
  const events: MessageStreamEvent[] = [];
  try {
    for await (const event of iterable) events.push(event);
    return { events, error: undefined };
  } catch (error) {
    if (!isTransportError(error)) throw error;
    return { events, error };
  }
}

function grammarViolation(events: readonly MessageStreamEvent[], complete: boolean): string | undefined {
  const grammar = createStreamGrammar();
  for (const event of events) {
    const violation = grammar.accept(event);
    if (violation !== undefined) return violation;
  }
  return complete ? grammar.end() : undefined;
}

describe('recorded upstream streams replayed over real HTTP', () => {
  let upstream: ScriptedServer;
  let transport: ModelTransport;

  beforeAll(async () => {
    upstream = await startScriptedServer();
    transport = createTransport({
      env: { TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL: `${upstream.url}/v1` },
      maxRetries: 0,
    });
  });
  afterAll(async () => {
    await transport.close();
    await upstream.close();
  });

  it('has stream recordings to replay', () => {
    expect(streamFixtures.length).toBeGreaterThanOrEqual(15);
  });

  it.each(streamFixtures.map((path) => [relative(FIXTURES, path)]))(
    '%s translates to a valid Messages event sequence, or a valid prefix and the right error',
    async (name) => {
      upstream.push(step.sse([sseBody(join(FIXTURES, name))]));
      const { events, error } = await collect(transport.stream(request));
      expect(upstream.requests.at(-1)?.headers['authorization']).toBe(`Bearer ${TOKEN}`);
      if (ERROR_RECORDINGS.has(name)) {
        expect(error?.code).toBe('MODEL_EHTTP');
        expect(error?.body.type).toBe('error');
        expect(grammarViolation(events, false)).toBeUndefined();
        expect(events.some((event) => event.type === 'message_stop')).toBe(false);
      } else {
        expect(error).toBeUndefined();
        expect(grammarViolation(events, true)).toBeUndefined();
        expect(events.at(-1)?.type).toBe('message_stop');
        const message = accumulateStream(events);
        expect(message.type).toBe('message');
        expect(message.model).toBe('claude-test');
        for (const block of message.content) {
          if (block.type === 'tool_use') expect((block as { id: string }).id).toMatch(/^[A-Za-z0-9_-]+$/);
        }
      }
    },
  );

  it('fails before any event when the first upstream chunk is an error, so the exchange can still be retried', async () => {
    const overloaded = { error: { message: 'server is overloaded, slow down', code: 503 } };
    upstream.push(step.sse(openAiSse([overloaded], { done: false })));
    const failed = await collect(transport.stream(request));
    expect(failed.events).toEqual([]);
    expect(failed.error?.code).toBe('MODEL_EHTTP');
    expect(failed.error?.body.error.type).toBe('overloaded_error');

    const retrying = createTransport({
      env: { TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL: `${upstream.url}/v1` },
      maxRetries: 1,
      sleep: async () => {},
    });
    try {
      const before = upstream.requests.length;
      upstream.push(
        step.sse(openAiSse([overloaded], { done: false })),
        step.sse(openAiSse([chunk({ role: 'assistant', content: 'fine now' }), chunk({}, 'stop')])),
      );
      const retried = await collect(retrying.stream(request));
      expect(retried.error).toBeUndefined();
      expect(upstream.requests.length - before).toBe(2);
      expect(accumulateStream(retried.events).content).toEqual([{ type: 'text', text: 'fine now' }]);
    } finally {
      await retrying.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------------

function responseOf(parts: readonly Buffer[]): HttpResponse {
  return {
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    body: ResponseBody.of(parts),
  };
}

const context: AttemptContext = {
  cancellation: new Cancellation(),
  deadlines: DEFAULT_DEADLINES,
  dispatcher: () => {
    throw new Error('no network in this test');
  },
  maxResponseBytes: 1 << 24,
  provider: 'tpx',
};

async function decode(parts: readonly Buffer[]): Promise<SseMessage[]> {
  const messages: SseMessage[] = [];
  for await (const batch of readSse(responseOf(parts), context)) {
    // A batch is what one chunk completed: never empty.
    expect(batch.length).toBeGreaterThan(0);
    messages.push(...batch);
  }
  return messages;
}

/**
 * Offsets to split a recording at: every one for recordings up to 3,000 bytes; for larger ones the first
 * 1,500, every offset inside or next to a multi-byte character or a CR (up to 1,000), and an even
 * spread over the rest — the whole set for the large recordings would take minutes.
 */
function splitOffsets(bytes: Buffer): number[] {
  if (bytes.length <= 3_000) return Array.from({ length: bytes.length - 1 }, (_, index) => index + 1);
  const offsets = new Set<number>();
  for (let offset = 1; offset <= 1_500; offset++) offsets.add(offset);
  let special = 0;
  for (let index = 1; index < bytes.length && special < 1_000; index++) {
    if (bytes[index]! >= 0x80 || bytes[index] === 0x0d) {
      offsets.add(index);
      offsets.add(index + 1);
      special++;
    }
  }
  const stride = Math.ceil(bytes.length / 1_500);
  for (let offset = 1_500; offset < bytes.length; offset += stride) offsets.add(offset);
  return [...offsets].filter((offset) => offset > 0 && offset < bytes.length);
}

describe('the SSE decoder', () => {
  const recordings = [
    ...walk(FIXTURES).filter((path) => path.endsWith('.sse')),
    ...walk(ANTHROPIC_FIXTURES).filter((path) => path.endsWith('.sse')),
  ].sort();

  it.each(recordings.map((path) => [path.slice(path.indexOf('__fixtures__/') + 13)]))(
    'gives the same events for %s whole or split at any byte offset',
    async (name) => {
      const path = recordings.find((candidate) => candidate.endsWith(name))!;
      const bytes = readFileSync(path);
      const whole = await decode([bytes]);
      expect(whole.length).toBeGreaterThan(0);
      const expected = JSON.stringify(whole);
      for (const offset of splitOffsets(bytes)) {
        const split = await decode([bytes.subarray(0, offset), bytes.subarray(offset)]);
        if (JSON.stringify(split) !== expected) {
          expect.fail(`splitting at byte ${offset} changed the events`);
        }
      }
    },
  );

  it('gives the same events with CRLF or CR line endings, a BOM, comments and a missing final blank line', async () => {
    const canonical =
      'event: a\ndata: {"x":"é€𝄞"}\n\n: a comment\ndata: line one\ndata: line two\n\ndata: [DONE]\n\n';
    const expected = await decode([Buffer.from(canonical)]);
    expect(expected).toEqual([
      { event: 'a', data: '{"x":"é€𝄞"}' },
      { event: undefined, data: 'line one\nline two' },
      { event: undefined, data: '[DONE]' },
    ]);
    const variants = [
      canonical.replaceAll('\n', '\r\n'),
      canonical.replaceAll('\n', '\r'),
      `\uFEFF${canonical}`,
      canonical.slice(0, -1), // the last frame lacks its terminating blank line
    ];
    for (const variant of variants) {
      const bytes = Buffer.from(variant);
      for (let offset = 1; offset < bytes.length; offset++) {
        const split = await decode([bytes.subarray(0, offset), bytes.subarray(offset)]);
        expect(split).toEqual(expected);
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------------

function chunk(delta: Record<string, unknown>, finish: string | null = null, usage?: Record<string, number>) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    model: 'upstream-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(usage === undefined ? {} : { usage }),
  };
}

const INTERLEAVED = [
  chunk({ role: 'assistant', content: 'Checking both. ' }),
  chunk({
    tool_calls: [
      { index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } },
    ],
  }),
  chunk({
    tool_calls: [
      {
        index: 1,
        id: 'functions.get_capital:1',
        type: 'function',
        function: { name: 'get_capital', arguments: '' },
      },
    ],
  }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
  chunk({ tool_calls: [{ index: 1, function: { arguments: '{"country":' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
  chunk({ tool_calls: [{ index: 1, function: { arguments: '"France"}' } }] }),
  chunk({}, 'tool_calls', { prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 }),
];

const REASONING = [
  chunk({ role: 'assistant', reasoning_content: 'The user wants ' }),
  chunk({ reasoning_content: 'a greeting.' }),
  chunk({ content: 'Hello' }),
  chunk({ content: ' there!' }),
  chunk({}, 'stop', { prompt_tokens: 10, completion_tokens: 7, total_tokens: 17 }),
];

const TEXT = [chunk({ role: 'assistant', content: 'Just ' }), chunk({ content: 'text.' }), chunk({}, 'stop')];

describe('the official SDK accumulating a translated stream through tpx serve', () => {
  let upstream: ScriptedServer;
  let transport: ModelTransport;
  let server: RunningServer;
  let client: Anthropic;

  beforeAll(async () => {
    upstream = await startScriptedServer();
    transport = createTransport({
      env: { TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL: `${upstream.url}/v1` },
      maxRetries: 0,
    });
    server = await startServer({ transport, port: 0, logger: false });
    client = new Anthropic({ baseURL: server.url, apiKey: 'client-key', maxRetries: 0 });
  });
  afterAll(async () => {
    await server.close();
    await transport.close();
    await upstream.close();
  });

  /** The same chunks as one non-stream Chat Completion, translated by `send`. */
  async function viaSend(chunks: readonly ReturnType<typeof chunk>[]): Promise<Message> {
    const content: string[] = [];
    const reasoning: string[] = [];
    const calls = new Map<
      number,
      { id: string; type: 'function'; function: { name: string; arguments: string } }
    >();
    let finish: string | null = null;
    let usage: Record<string, number> | undefined;
    for (const item of chunks) {
      const choice = item.choices[0]!;
      const delta = choice.delta as {
        content?: string;
        reasoning_content?: string;
        tool_calls?: { index: number; id?: string; function: { name?: string; arguments: string } }[];
      };
      if (delta.content !== undefined) content.push(delta.content);
      if (delta.reasoning_content !== undefined) reasoning.push(delta.reasoning_content);
      for (const call of delta.tool_calls ?? []) {
        const known = calls.get(call.index);
        if (known === undefined) {
          calls.set(call.index, {
            id: call.id ?? '',
            type: 'function',
            function: { name: call.function.name ?? '', arguments: call.function.arguments },
          });
        } else known.function.arguments += call.function.arguments;
      }
      finish = choice.finish_reason ?? finish;
      usage = item.usage ?? usage;
    }
    upstream.push(
      step.json({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        model: 'upstream-model',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: content.length === 0 ? null : content.join(''),
              ...(reasoning.length === 0 ? {} : { reasoning_content: reasoning.join('') }),
              ...(calls.size === 0 ? {} : { tool_calls: [...calls.values()] }),
            },
            finish_reason: finish,
          },
        ],
        ...(usage === undefined ? {} : { usage }),
      }),
    );
    return transport.send(request);
  }

  async function viaSdkStream(chunks: readonly ReturnType<typeof chunk>[]) {
    upstream.push(step.sse(openAiSse(chunks)));
    return client.messages.stream({ ...request, messages: [{ role: 'user', content: 'go' }] }).finalMessage();
  }

  function comparable(message: {
    content: unknown;
    stop_reason: unknown;
    usage: { input_tokens: number; output_tokens: number };
  }) {
    return {
      content: message.content,
      stop_reason: message.stop_reason,
      usage: { input_tokens: message.usage.input_tokens, output_tokens: message.usage.output_tokens },
    };
  }

  it('gives the same message for two interleaved parallel tool calls as the non-stream translation', async () => {
    const streamed = await viaSdkStream(INTERLEAVED);
    const sent = await viaSend(INTERLEAVED);
    expect(comparable(streamed)).toEqual(comparable(sent));
    expect(streamed.stop_reason).toBe('tool_use');
    const toolUses = streamed.content.filter((block) => block.type === 'tool_use');
    expect(toolUses.map((block) => block.input)).toEqual([{ city: 'Paris' }, { country: 'France' }]);
    expect(toolUses.map((block) => block.name)).toEqual(['get_weather', 'get_capital']);
  });

  it('brings the provider ids of interleaved calls back to the provider exactly on the next turn', async () => {
    const streamed = await viaSdkStream(INTERLEAVED);
    const toolUses = streamed.content.filter((block) => block.type === 'tool_use');
    upstream.push(step.sse(openAiSse(TEXT)));
    await client.messages
      .stream({
        ...request,
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: streamed.content },
          {
            role: 'user',
            content: toolUses.map((block) => ({
              type: 'tool_result' as const,
              tool_use_id: block.id,
              content: 'ok',
            })),
          },
        ],
      })
      .finalMessage();
    const outbound = upstream.requests.at(-1)?.json as {
      messages: { role: string; tool_call_id?: string; tool_calls?: { id: string }[] }[];
    };
    const toolMessages = outbound.messages.filter((message) => message.role === 'tool');
    expect(toolMessages.map((message) => message.tool_call_id)).toEqual([
      'call_a',
      'functions.get_capital:1',
    ]);
    const assistant = outbound.messages.find((message) => message.role === 'assistant');
    expect(assistant?.tool_calls?.map((call) => call.id)).toEqual(['call_a', 'functions.get_capital:1']);
  });

  it('gives the same message for reasoning then text as the non-stream translation', async () => {
    const streamed = await viaSdkStream(REASONING);
    const sent = await viaSend(REASONING);
    expect(comparable(streamed)).toEqual(comparable(sent));
    expect(streamed.content.map((block) => block.type)).toEqual(['thinking', 'text']);
    expect(streamed.content[0]).toMatchObject({ type: 'thinking', thinking: 'The user wants a greeting.' });
  });

  it('gives the same message for plain text as the non-stream translation', async () => {
    const streamed = await viaSdkStream(TEXT);
    const sent = await viaSend(TEXT);
    // TEXT carries no usage: the stream keeps the estimate it sent in message_start, while the whole
    // answer has nothing better than 0.
    const expected = comparable(sent);
    expect(comparable(streamed)).toEqual({
      ...expected,
      usage: { ...expected.usage, input_tokens: streamed.usage.input_tokens },
    });
    expect(streamed.usage.input_tokens).toBeGreaterThan(0);
    expect(streamed.content).toEqual([expect.objectContaining({ type: 'text', text: 'Just text.' })]);
  });
});
