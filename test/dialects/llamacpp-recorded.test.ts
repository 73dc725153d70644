/**
 * What a real llama.cpp server (b11669) answered, replayed without the server: a scripted server on
 * 127.0.0.1 answers every route with the bytes, status and content type recorded in
 * `__fixtures__/llamacpp/b11669/` (re-record with `npx tsx test/real-server/record-fixtures.ts`; provenance
 * in `__fixtures__/SOURCES.md`). Both providers read them: `tpx` with dialect `llamacpp` (Chat
 * Completions, `/props`, `/apply-template` + `/tokenize`) and `anthropic` (llama.cpp's own `/v1/messages`
 * and `/v1/messages/count_tokens`). The models write random text; nothing here looks at words, only at
 * ids, pairing, stop reasons, usage, counts, lists and errors.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createTransport, isTransportError, type ModelTransport } from '../../src/index.js';
import type {
  Message,
  MessagesRequest,
  MessageStreamEvent,
  ToolUseBlock,
} from '../../src/protocol/messages.js';
import { accumulateStream } from '../helpers/accumulate-stream.js';
import { createStreamGrammar } from '../../src/protocol/stream-grammar.js';
import { validateStreamEvent } from '../../src/protocol/validate-messages.js';
import { startScriptedServer, step, type ScriptedServer, type Step } from '../helpers/scripted-server.js';

const FIXTURES = new URL('./__fixtures__/llamacpp/b11669/', import.meta.url);

interface Recording {
  /** The response body as received. */
  body: string;
  status: number;
  contentType: string;
  /** The request that was sent. */
  request: { method: string; path: string; body?: Record<string, unknown> };
}

/** A recording by name (`chat.tool-call`): its body (`.json` or `.sse`) and what its `.meta.json` says. */
function recording(name: string): Recording {
  const meta = JSON.parse(readFileSync(new URL(`${name}.meta.json`, FIXTURES), 'utf8')) as {
    request: Recording['request'];
    response: { status: number; headers: Record<string, string[]> };
  };
  const contentType = meta.response.headers['content-type']?.[0] ?? '';
  const extension = contentType.startsWith('text/event-stream') ? 'sse' : 'json';
  return {
    body: readFileSync(new URL(`${name}.${extension}`, FIXTURES), 'utf8'),
    status: meta.response.status,
    contentType,
    request: meta.request,
  };
}

/** The recorded answer as a scripted step: JSON byte for byte, a stream frame by frame as recorded. */
function replay(name: string): Step {
  const recorded = recording(name);
  const headers = { 'content-type': recorded.contentType };
  if (recorded.contentType.startsWith('text/event-stream')) {
    return step.sse(recorded.body.split(/(?<=\n\n)/), { status: recorded.status, headers });
  }
  return step.text(recorded.status, recorded.body, headers);
}

/** The recorded Chat Completions answer, parsed. */
function chatAnswer(name: string) {
  return JSON.parse(recording(name).body) as {
    choices: {
      finish_reason: string;
      message: { tool_calls: { id: string; function: { name: string; arguments: string } }[] };
    }[];
    usage: {
      prompt_tokens: number;
      completion_tokens: number;
      prompt_tokens_details: { cached_tokens: number };
    };
  };
}

/** The ids of the tool calls a recorded stream opened, in order. */
function streamedToolIds(name: string): string[] {
  const ids: string[] = [];
  for (const line of recording(name).body.split('\n')) {
    if (!line.startsWith('data: {')) continue;
    const payload = JSON.parse(line.slice('data: '.length)) as {
      choices?: { delta?: { tool_calls?: { id?: string }[] } }[];
      content_block?: { type: string; id?: string };
    };
    for (const call of payload.choices?.[0]?.delta?.tool_calls ?? [])
      if (call.id !== undefined) ids.push(call.id);
    if (payload.content_block?.type === 'tool_use') ids.push(payload.content_block.id!);
  }
  return ids;
}

let server: ScriptedServer | undefined;
const transports: ModelTransport[] = [];

afterEach(async () => {
  for (const transport of transports.splice(0)) await transport.close();
  await server?.close();
  server = undefined;
});

/** A scripted server answering each path with a recording (anything else: llama.cpp's recorded 404). */
async function serve(routes: Record<string, string>): Promise<ScriptedServer> {
  server = await startScriptedServer((record) => {
    const name = routes[record.url.split('?')[0]!];
    return name === undefined
      ? step.text(404, '{"error":{"message":"File Not Found","type":"not_found_error","code":404}}', {
          'content-type': 'application/json; charset=utf-8',
        })
      : replay(name);
  });
  return server;
}

function tpxTransport(scripted: ScriptedServer, extra: Record<string, unknown> = {}): ModelTransport {
  const transport = createTransport({
    env: {},
    tpxToken: 'recorded-test-token',
    tpxBaseUrl: `${scripted.url}/v1`,
    tpxDialect: 'llamacpp',
    maxRetries: 0,
    ...extra,
  });
  transports.push(transport);
  return transport;
}

function anthropicTransport(scripted: ScriptedServer): ModelTransport {
  const transport = createTransport({
    env: {},
    anthropicApiKey: 'recorded-test-key',
    anthropicBaseUrl: scripted.url,
    maxRetries: 0,
  });
  transports.push(transport);
  return transport;
}

/** The caller's side of the recorded exchanges: the request the tiny model was asked. */
function weatherRequest(maxTokens = 400): MessagesRequest {
  const recorded = recording('messages.tool-call').request.body as unknown as MessagesRequest;
  return { ...recorded, max_tokens: maxTokens };
}

/** Every event of a stream, each checked against the event schema and the stream grammar. */
async function collect(events: AsyncIterable<MessageStreamEvent>): Promise<MessageStreamEvent[]> {
  const grammar = createStreamGrammar();
  const all: MessageStreamEvent[] = [];
  for await (const event of events) {
    const validation = validateStreamEvent(event);
    expect(validation.ok ? undefined : validation.message).toBeUndefined();
    expect(grammar.accept(event)).toBeUndefined();
    all.push(event);
  }
  expect(grammar.end()).toBeUndefined();
  return all;
}

/** The ids of a message's tool_use blocks, in order. */
function toolUseIds(message: Message): string[] {
  return message.content
    .filter((block): block is ToolUseBlock => block.type === 'tool_use')
    .map((block) => block.id);
}

/** A message with its tool ids masked: JSON and stream were two answers, each with fresh random ids. */
function withoutToolIds(message: Message): unknown {
  return {
    ...message,
    id: '<id>',
    content: message.content.map((block) => (block.type === 'tool_use' ? { ...block, id: '<id>' } : block)),
  };
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('the exchange succeeded'),
    (caught: unknown) => caught,
  );
}

async function streamFailure(events: AsyncIterable<MessageStreamEvent>): Promise<unknown> {
  try {
    for await (const _event of events) {
      // drained until it fails
    }
  } catch (caught) {
    return caught;
  }
  return expect.unreachable('the stream succeeded');
}

// ---------------------------------------------------------------------------------------------------

describe('tpx (dialect llamacpp) replaying llama.cpp b11669', () => {
  it('delivers both recorded tool calls with the server’s own ids, parsed input and stop_reason tool_use', async () => {
    const scripted = await serve({ '/v1/chat/completions': 'chat.tool-call' });
    const message = await tpxTransport(scripted).send(weatherRequest());
    const calls = chatAnswer('chat.tool-call').choices[0]!.message.tool_calls;
    expect(calls).toHaveLength(2);
    expect(message.stop_reason).toBe('tool_use');
    const toolUses = message.content.filter((block) => block.type === 'tool_use');
    expect(toolUses).toEqual(
      calls.map((call) => ({
        type: 'tool_use',
        id: call.id,
        name: call.function.name,
        input: JSON.parse(call.function.arguments) as unknown,
      })),
    );
  });

  it('reads usage from a cold cache (cached_tokens 0) and from the same prompt sent again (cache read)', async () => {
    const cold = chatAnswer('chat.tool-call').usage;
    const warm = chatAnswer('chat.tool-call.cached').usage;
    expect(cold.prompt_tokens_details.cached_tokens).toBe(0);
    expect(warm.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);

    const scripted = await serve({ '/v1/chat/completions': 'chat.tool-call' });
    const first = await tpxTransport(scripted).send(weatherRequest());
    expect(first.usage.input_tokens).toBe(cold.prompt_tokens);
    expect(first.usage.output_tokens).toBe(cold.completion_tokens);
    expect(first.usage.cache_read_input_tokens ?? 0).toBe(0);
    await server!.close();

    const again = await serve({ '/v1/chat/completions': 'chat.tool-call.cached' });
    const second = await tpxTransport(again).send(weatherRequest());
    expect(second.usage).toMatchObject({
      input_tokens: warm.prompt_tokens - warm.prompt_tokens_details.cached_tokens,
      cache_read_input_tokens: warm.prompt_tokens_details.cached_tokens,
      output_tokens: warm.completion_tokens,
    });
  });

  it('streams the recorded exchange (include_usage) into the message send gives for the same exchange', async () => {
    const scripted = await serve({ '/v1/chat/completions': 'chat.tool-call.stream' });
    const events = await collect(tpxTransport(scripted).stream({ ...weatherRequest(), stream: true }));
    const sent = scripted.requests[0]!.json as { stream?: boolean; stream_options?: unknown };
    expect(sent.stream).toBe(true);
    expect(sent.stream_options).toEqual({ include_usage: true });
    const streamed = accumulateStream(events);
    expect(toolUseIds(streamed)).toEqual(streamedToolIds('chat.tool-call.stream'));
    await server!.close();

    const json = await serve({ '/v1/chat/completions': 'chat.tool-call.cached' });
    const sentMessage = await tpxTransport(json).send(weatherRequest());
    expect(withoutToolIds(streamed)).toEqual(withoutToolIds(sentMessage));
    expect(streamed.usage.cache_read_input_tokens).toBeGreaterThan(0);
  });

  it('sends the server’s own ids back, paired, when the caller answers the recorded calls', async () => {
    const scripted = await serve({ '/v1/chat/completions': 'chat.tool-call.cached' });
    const transport = tpxTransport(scripted);
    const first = await transport.send(weatherRequest());
    const ids = toolUseIds(first);
    await transport.send({
      ...weatherRequest(),
      messages: [
        ...weatherRequest().messages,
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: ids.map((id, index) => ({
            type: 'tool_result',
            tool_use_id: id,
            content: `${20 + index} °C`,
          })),
        },
      ],
    });
    const providerIds = chatAnswer('chat.tool-call.cached').choices[0]!.message.tool_calls.map(
      (call) => call.id,
    );
    const followUp = scripted.requests[1]!.json as {
      messages: { role: string; tool_calls?: { id: string }[]; tool_call_id?: string }[];
    };
    const assistant = followUp.messages.find((message) => message.role === 'assistant')!;
    expect(assistant.tool_calls!.map((call) => call.id)).toEqual(providerIds);
    expect(
      followUp.messages.filter((message) => message.role === 'tool').map((message) => message.tool_call_id),
    ).toEqual(providerIds);
  });

  it.each([
    ['cut right after its "{"', 'chat.tool-call-cut', 'chat.tool-call-cut.stream'],
    ['cut inside its arguments', 'chat.tool-call-cut-in-arguments', 'chat.tool-call-cut-in-arguments.stream'],
  ])(
    'gives a tool call %s stop_reason max_tokens and the input completed by appending, in send and stream alike',
    async (_case, jsonName, streamName) => {
      const answer = chatAnswer(jsonName);
      expect(answer.choices[0]!.finish_reason).toBe('length');
      const cut = answer.choices[0]!.message.tool_calls.at(-1)!;
      // What arrived, closed by hand: `{` → `{}`, `{"city" :"Fv<tool_call>y"` → that plus `}`.
      const expectedInput = JSON.parse(`${cut.function.arguments}}`) as unknown;
      const maxTokens = (recording(jsonName).request.body as { max_tokens: number }).max_tokens;

      const scripted = await serve({ '/v1/chat/completions': jsonName });
      const sent = await tpxTransport(scripted).send(weatherRequest(maxTokens));
      expect(sent.stop_reason).toBe('max_tokens');
      expect(sent.content.at(-1)).toEqual({
        type: 'tool_use',
        id: cut.id,
        name: 'get_weather',
        input: expectedInput,
      });
      await server!.close();

      const streaming = await serve({ '/v1/chat/completions': streamName });
      const events = await collect(
        tpxTransport(streaming).stream({ ...weatherRequest(maxTokens), stream: true }),
      );
      const streamed = accumulateStream(events);
      expect(streamed.stop_reason).toBe('max_tokens');
      expect(withoutToolIds(streamed)).toEqual(withoutToolIds(sent));
      expect(streamed.usage).toEqual(sent.usage);
    },
  );

  it('maps the recorded /v1/models list to the Messages list shape', async () => {
    const scripted = await serve({ '/v1/models': 'models' });
    const listed = (await tpxTransport(scripted).listModels!()) as {
      data: { type: string; id: string }[];
      has_more: boolean;
    };
    const recorded = JSON.parse(recording('models').body) as { data: { id: string }[] };
    expect(listed.data.map((entry) => [entry.type, entry.id])).toEqual(
      recorded.data.map((entry) => ['model', entry.id]),
    );
    expect(listed.has_more).toBe(false);
  });

  it.each([
    ['props', 4096],
    ['props.small-context', 256],
  ])('reads the context size of the server run with -c from the recorded %s', async (name, contextSize) => {
    const scripted = await serve({ '/v1/models': 'models', '/props': name });
    const report = await tpxTransport(scripted).inspectUpstream!();
    expect(report.contextWindow).toEqual({ tokens: contextSize, source: `${scripted.url}/props` });
  });

  it('caps max_tokens to the context size the recorded /props states', async () => {
    const scripted = await serve({
      '/v1/models': 'models',
      '/props': 'props',
      '/v1/chat/completions': 'chat.tool-call.cached',
    });
    // A Claude model name: with one model listed, tpx sends that one.
    await tpxTransport(scripted, { inspectUpstream: true }).send({
      ...weatherRequest(32_000),
      model: 'claude-sonnet-4-5',
    });
    const chat = scripted.requests.find((request) => request.url === '/v1/chat/completions')!;
    const sentMaxTokens = (chat.json as { max_tokens: number }).max_tokens;
    expect(sentMaxTokens).toBeGreaterThan(0);
    expect(sentMaxTokens).toBeLessThan(4096);
  });

  it('counts tokens with the server: the recorded /apply-template and /tokenize give the prompt_tokens it bills', async () => {
    const scripted = await serve({ '/apply-template': 'apply-template', '/tokenize': 'tokenize' });
    const { max_tokens: _maxTokens, ...countRequest } = weatherRequest();
    const count = await tpxTransport(scripted).countTokens!(countRequest);
    expect(scripted.requests.map((request) => request.url)).toEqual(['/apply-template', '/tokenize']);
    expect(count).toEqual({ input_tokens: chatAnswer('chat.tool-call').usage.prompt_tokens });
    // What tpx asked to template is what the recording asked: the same prompt.
    const recordedTemplate = recording('apply-template').request.body!;
    const sentTemplate = scripted.requests[0]!.json as Record<string, unknown>;
    expect(sentTemplate['messages']).toEqual(recordedTemplate['messages']);
    expect(sentTemplate['tools']).toEqual(recordedTemplate['tools']);
    expect(scripted.requests[1]!.json).toEqual(recording('tokenize').request.body);
  });

  it.each([
    ['send', 'chat.error.context-overflow'],
    ['stream', 'chat.error.context-overflow.stream'],
  ])(
    'maps the recorded context overflow (%s) to 400 invalid_request_error saying “prompt is too long” with the server’s sizes',
    async (mode, name) => {
      const scripted = await serve({ '/v1/chat/completions': name });
      const transport = tpxTransport(scripted);
      const request = weatherRequest(16);
      const error =
        mode === 'send'
          ? await failure(transport.send(request))
          : await streamFailure(transport.stream({ ...request, stream: true }));
      expect(isTransportError(error)).toBe(true);
      if (!isTransportError(error)) return;
      expect(error.code).toBe('MODEL_EHTTP');
      expect(error.status).toBe(400);
      expect(error.body.error.type).toBe('invalid_request_error');
      expect(error.retryable).toBe(false);
      // Claude Code compacts on "prompt is too long" in the message; the server's own words follow.
      expect(error.message).toContain('prompt is too long: 559 tokens > 256 maximum');
      expect(error.body.error.message).toContain('prompt is too long');
      expect(error.message).toContain('exceeds the available context size (256 tokens), try increasing it');
    },
  );

  it.each([
    ['send', 'strict.chat.error.system-not-first'],
    ['stream', 'strict.chat.error.system-not-first.stream'],
  ])(
    'maps the strict template’s recorded refusal (%s) to 400 invalid_request_error naming the system message',
    async (mode, name) => {
      const scripted = await serve({ '/v1/chat/completions': name });
      const transport = tpxTransport(scripted);
      const error =
        mode === 'send'
          ? await failure(transport.send(weatherRequest()))
          : await streamFailure(transport.stream({ ...weatherRequest(), stream: true }));
      expect(isTransportError(error)).toBe(true);
      if (!isTransportError(error)) return;
      expect(error.code).toBe('MODEL_EHTTP');
      expect(error.status).toBe(400);
      expect(error.body.error.type).toBe('invalid_request_error');
      expect(error.retryable).toBe(false);
      expect(error.message).toContain('System message must be at the beginning');
    },
  );
});

describe('anthropic provider replaying llama.cpp b11669’s /v1/messages', () => {
  it('hands on the recorded tool calls with their ids, stop_reason tool_use and Anthropic usage', async () => {
    const scripted = await serve({ '/v1/messages': 'messages.tool-call' });
    const message = await anthropicTransport(scripted).send(weatherRequest());
    const recorded = JSON.parse(recording('messages.tool-call').body) as Message;
    expect(message).toEqual(recorded);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content.filter((block) => block.type === 'tool_use')).toHaveLength(2);
    expect(message.usage.cache_read_input_tokens).toBeGreaterThan(0);
  });

  it('streams the recorded exchange into a valid event sequence whose message equals the JSON answer', async () => {
    const scripted = await serve({ '/v1/messages': 'messages.tool-call.stream' });
    const events = await collect(anthropicTransport(scripted).stream({ ...weatherRequest(), stream: true }));
    const streamed = accumulateStream(events);
    expect(toolUseIds(streamed)).toEqual(streamedToolIds('messages.tool-call.stream'));
    const recorded = JSON.parse(recording('messages.tool-call').body) as Message;
    expect(withoutToolIds(streamed)).toEqual(withoutToolIds(recorded));
  });

  it('completes a streamed tool input cut by max_tokens by appending, as the tpx path does', async () => {
    const name = 'messages.tool-call-cut-in-arguments.stream';
    const maxTokens = (recording(name).request.body as { max_tokens: number }).max_tokens;
    const scripted = await serve({ '/v1/messages': name });
    const events = await collect(
      anthropicTransport(scripted).stream({ ...weatherRequest(maxTokens), stream: true }),
    );
    const fragments = events.flatMap((event) =>
      event.type === 'content_block_delta' && event.delta.type === 'input_json_delta'
        ? [event.delta.partial_json]
        : [],
    );
    const recordedFragments = [...recording(name).body.matchAll(/"partial_json":("(?:[^"\\]|\\.)*")/g)].map(
      (match) => JSON.parse(match[1]!) as string,
    );
    // Every recorded fragment as sent, then one more: the suffix that closes what arrived.
    expect(fragments.slice(0, -1)).toEqual(recordedFragments);
    expect(fragments.at(-1)).toBe('}');
    const streamed = accumulateStream(events);
    expect(streamed.stop_reason).toBe('max_tokens');
    expect(streamed.content.at(-1)).toMatchObject({
      type: 'tool_use',
      input: JSON.parse(`${recordedFragments.join('')}}`) as unknown,
    });
  });

  it('hands on the JSON answer of the same cut as llama.cpp sends it: the cut call with input {}', async () => {
    // llama.cpp's JSON answer drops what the stream sent of the cut input, so on this path the two
    // differ; the stream cannot take back fragments it delivered.
    const scripted = await serve({ '/v1/messages': 'messages.tool-call-cut-in-arguments' });
    const maxTokens = (
      recording('messages.tool-call-cut-in-arguments').request.body as { max_tokens: number }
    ).max_tokens;
    const message = await anthropicTransport(scripted).send(weatherRequest(maxTokens));
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.content.at(-1)).toMatchObject({ type: 'tool_use', input: {} });
  });

  it('gives the same message for a call cut right after "{" in send and stream', async () => {
    const name = 'messages.tool-call-cut';
    const maxTokens = (recording(name).request.body as { max_tokens: number }).max_tokens;
    const scripted = await serve({ '/v1/messages': name });
    const sent = await anthropicTransport(scripted).send(weatherRequest(maxTokens));
    await server!.close();
    const streaming = await serve({ '/v1/messages': `${name}.stream` });
    const events = await collect(
      anthropicTransport(streaming).stream({ ...weatherRequest(maxTokens), stream: true }),
    );
    const streamed = accumulateStream(events);
    expect(sent.stop_reason).toBe('max_tokens');
    expect(sent.content.at(-1)).toMatchObject({ type: 'tool_use', input: {} });
    expect(withoutToolIds(streamed)).toEqual(withoutToolIds(sent));
  });

  it('returns the server’s own count from the recorded /v1/messages/count_tokens', async () => {
    const scripted = await serve({ '/v1/messages/count_tokens': 'messages.count-tokens' });
    const { max_tokens: _maxTokens, ...countRequest } = weatherRequest();
    const count = await anthropicTransport(scripted).countTokens!({
      ...countRequest,
      system: 'You are a weather assistant.',
    });
    expect(count).toEqual(JSON.parse(recording('messages.count-tokens').body));
    expect(scripted.requests.map((request) => request.url)).toEqual(['/v1/messages/count_tokens']);
  });

  it('maps the recorded OpenAI-shaped /v1/models list to the Messages list shape', async () => {
    const scripted = await serve({ '/v1/models': 'models' });
    const listed = (await anthropicTransport(scripted).listModels!()) as {
      data: { type: string; id: string }[];
    };
    const recorded = JSON.parse(recording('models').body) as { data: { id: string }[] };
    expect(listed.data.map((entry) => [entry.type, entry.id])).toEqual(
      recorded.data.map((entry) => ['model', entry.id]),
    );
  });

  it.each([
    ['send', 'messages.error.context-overflow', /prompt is too long: 559 tokens > 256 maximum; request/],
    [
      'stream',
      'messages.error.context-overflow.stream',
      /prompt is too long: 559 tokens > 256 maximum; request/,
    ],
    ['send', 'strict.messages.error.system-not-first', /System message must be at the beginning/],
  ])(
    'maps the recorded error (%s, %s) to 400 invalid_request_error with the server’s reason',
    async (mode, name, reason) => {
      const scripted = await serve({ '/v1/messages': name });
      const transport = anthropicTransport(scripted);
      const error =
        mode === 'send'
          ? await failure(transport.send(weatherRequest(16)))
          : await streamFailure(transport.stream({ ...weatherRequest(16), stream: true }));
      expect(isTransportError(error)).toBe(true);
      if (!isTransportError(error)) return;
      expect(error.code).toBe('MODEL_EHTTP');
      expect(error.status).toBe(400);
      expect(error.body.error.type).toBe('invalid_request_error');
      expect(error.retryable).toBe(false);
      expect(error.message).toMatch(reason);
    },
  );
});
