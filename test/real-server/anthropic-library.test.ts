/**
 * The `anthropic` provider through the library against llama.cpp's own Messages endpoints
 * (`/v1/messages`, `/v1/messages/count_tokens`, `/v1/models`), with a recording tap in between that
 * shows what really crossed the wire. On this path tpx sends the caller's body as it is and hands the
 * server's answer back after validating it, so the ids, usage and stop reasons a caller sees are the
 * server's own: these tests hold them against what the tap recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accumulateStream } from '../helpers/accumulate-stream.js';
import type { Message, MessageStreamEvent } from '../../src/protocol/messages.js';
import { createSession, createTransport } from '../../src/index.js';
import type { ModelTransport } from '../../src/transport/types.js';
import { startLlamaServer, type LlamaServer } from './llama-server.js';
import {
  collect,
  forcedToolRequest,
  isCompleteJson,
  toolUses,
  validMessage,
  withoutIds,
} from './real-server-support.js';
import { startRecordingTap, type RecordingTap } from './recording-tap.js';

let server: LlamaServer;
let tap: RecordingTap;
let transport: ModelTransport;

beforeAll(async () => {
  server = await startLlamaServer({ model: 'tiny-tools' });
  tap = await startRecordingTap(server.url);
  transport = createTransport({
    env: {},
    anthropicApiKey: 'real-server-key',
    anthropicBaseUrl: tap.url,
    maxRetries: 0,
  });
});

afterAll(async () => {
  await transport?.close();
  await tap?.close();
  await server?.stop();
});

/** The server's own answer to the last request that went through the tap. */
function lastAnswer(): Message {
  return tap.exchanges.at(-1)!.response.json as Message;
}

/**
 * The `data:` payloads of the last streamed answer, as the server sent them. The caller may have read
 * `message_stop` before the tap saw the body end, so this waits (boundedly) until the body ended or the
 * caller closed the connection after its last event.
 */
async function lastStreamedEvents(): Promise<MessageStreamEvent[]> {
  const exchange = tap.exchanges.at(-1)!;
  const settled = () => exchange.response.complete || exchange.response.callerLeft;
  for (let waited = 0; !settled() && waited < 250; waited += 1) {
    await new Promise((wake) => setTimeout(wake, 20));
  }
  expect(settled()).toBe(true);
  return exchange.response.text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)) as MessageStreamEvent);
}

/** A max_tokens at which llama.cpp ends `/v1/messages` with `max_tokens` while a tool call is open. */
async function findCutToolUse(candidates: readonly number[] = [40, 60, 80, 100]): Promise<number> {
  for (const maxTokens of candidates) {
    const response = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(forcedToolRequest(maxTokens)),
    });
    const answer = (await response.json()) as Message;
    if (answer.stop_reason === 'max_tokens' && toolUses(answer).length > 0) return maxTokens;
  }
  throw new Error(`no max_tokens in ${candidates.join(', ')} cut a tool call`);
}

describe('anthropic provider against llama.cpp: tool calls', () => {
  it('answers a forced tool call with the server’s tool_use blocks, the body sent as written', async () => {
    const request = forcedToolRequest(400);
    const message = validMessage(await transport.send(request));
    expect(message.stop_reason).toBe('tool_use');
    const calls = toolUses(message);
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      expect(call.name).toBe('get_weather');
      expect(Object.keys(call.input as object).sort()).toEqual(['city', 'unit']);
    }
    const sent = tap.exchanges.at(-1)!.request;
    expect(sent.url).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe('real-server-key');
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.json).toEqual(request);
  });

  it('hands parallel calls on with the ids the server made, each distinct', async () => {
    const message = await transport.send(forcedToolRequest(400));
    const calls = toolUses(message);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(new Set(calls.map((call) => call.id)).size).toBe(calls.length);
    expect(calls.map((call) => call.id)).toEqual(toolUses(lastAnswer()).map((call) => call.id));
  });

  it('streams the same answer send gives, in a grammar-valid event stream', async () => {
    const sent = await transport.send(forcedToolRequest(400));
    const events = await collect(transport.stream(forcedToolRequest(400)));
    expect(tap.exchanges.at(-1)!.request.json).toMatchObject({ stream: true });
    const streamed = accumulateStream(events);
    expect(streamed.stop_reason).toBe('tool_use');
    expect(withoutIds(streamed)).toEqual(withoutIds(sent));
    expect(streamed.usage.output_tokens).toBe(sent.usage.output_tokens);
    // The events are the server's own, in order: the tool ids of its content_block_start events.
    const serverIds = (await lastStreamedEvents())
      .filter((event) => event.type === 'content_block_start' && event.content_block.type === 'tool_use')
      .map((event) => (event as { content_block: { id: string } }).content_block.id);
    expect(toolUses(streamed).map((call) => call.id)).toEqual(serverIds);
  });

  it('sends the server its own tool_use ids back in the tool results (seen on the wire)', async () => {
    const request = forcedToolRequest(400);
    const first = await transport.send(request);
    const serverIds = toolUses(lastAnswer()).map((call) => call.id);
    const followUp = {
      ...request,
      tool_choice: { type: 'auto' as const },
      max_tokens: 16,
      messages: [
        ...request.messages,
        { role: 'assistant' as const, content: first.content },
        {
          role: 'user' as const,
          content: toolUses(first).map((call) => ({
            type: 'tool_result' as const,
            tool_use_id: call.id,
            content: 'sunny, 21 °C',
          })),
        },
      ],
    };
    const second = validMessage(await transport.send(followUp));
    expect(second.type).toBe('message');
    const sent = tap.exchanges.at(-1)!.request.json as typeof followUp;
    const assistant = sent.messages[1]!.content as { type: string; id?: string }[];
    expect(assistant.filter((block) => block.type === 'tool_use').map((block) => block.id)).toEqual(
      serverIds,
    );
    const results = sent.messages[2]!.content as { tool_use_id: string }[];
    expect(results.map((block) => block.tool_use_id)).toEqual(serverIds);
    expect(tap.exchanges.at(-1)!.response.status).toBe(200);
  });
});

describe('anthropic provider against llama.cpp: a tool call cut by the output limit', () => {
  let maxTokens: number;

  beforeAll(async () => {
    maxTokens = await findCutToolUse();
  });

  it('is delivered as the server sends it: stop_reason max_tokens and a tool_use with object input', async () => {
    const message = validMessage(await transport.send(forcedToolRequest(maxTokens)));
    expect(message.stop_reason).toBe('max_tokens');
    const calls = toolUses(message);
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) expect(typeof call.input).toBe('object');
    expect(message.content).toEqual(lastAnswer().content);
  });

  it('streams to a message that accumulates: the cut input is completed, the stop reason kept', async () => {
    const events = await collect(transport.stream(forcedToolRequest(maxTokens)));
    const streamed = accumulateStream(events);
    expect(streamed.stop_reason).toBe('max_tokens');
    const calls = toolUses(streamed);
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) expect(typeof call.input).toBe('object');
    // The server's stream stopped inside the last call's arguments; tpx appended the closing suffix as one
    // more input_json_delta, so the accumulated input is what arrived, completed.
    const serverEvents = await lastStreamedEvents();
    const lastIndex = Math.max(
      ...serverEvents.filter((event) => event.type === 'content_block_start').map((event) => event.index),
    );
    const serverFragments = serverEvents
      .filter((event) => event.type === 'content_block_delta' && event.index === lastIndex)
      .map((event) => (event as { delta: { partial_json: string } }).delta.partial_json)
      .join('');
    expect(isCompleteJson(serverFragments)).toBe(false);
    expect(JSON.stringify(calls.at(-1)!.input).length).toBeGreaterThan(0);
    const deliveredFragments = events
      .filter((event) => event.type === 'content_block_delta' && event.index === lastIndex)
      .map((event) => (event as { delta: { partial_json: string } }).delta.partial_json)
      .join('');
    expect(deliveredFragments.startsWith(serverFragments)).toBe(true);
    // A call cut before its first fragment has no input text at all: it accumulates to {}.
    const expected: unknown = serverFragments.trim() === '' ? {} : JSON.parse(deliveredFragments);
    expect(calls.at(-1)!.input).toEqual(expected);
  });

  it('leaves a session owing a tool_result for every delivered call, the cut one included', async () => {
    const session = createSession(transport);
    const cut = await session.send(forcedToolRequest(maxTokens));
    expect(session.pending).toEqual(toolUses(cut).map((call) => call.id));
  });
});

describe('anthropic provider against llama.cpp: usage, counting, models', () => {
  it('reports the server’s usage as it is: input excludes the cached prompt, cache reads counted', async () => {
    const request = forcedToolRequest(30);
    await transport.send(request);
    const message = await transport.send(request);
    expect(message.usage).toEqual(lastAnswer().usage);
    expect(message.usage.cache_read_input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBe(30);
  });

  it('reports a stream’s usage: cached prompt in message_start, output in message_delta', async () => {
    const request = forcedToolRequest(30);
    await transport.send(request);
    const events = await collect(transport.stream(request));
    const start = events.find((event) => event.type === 'message_start')!;
    expect(start.message.usage.cache_read_input_tokens).toBeGreaterThan(0);
    expect(accumulateStream(events).usage.output_tokens).toBe(30);
  });

  it('counts tokens on the server: the prompt tokens it reports for the same request, cached or not', async () => {
    const { max_tokens: _maxTokens, ...countRequest } = forcedToolRequest(8);
    const count = await transport.countTokens!(countRequest);
    expect(tap.exchanges.at(-1)!.request.url).toBe('/v1/messages/count_tokens');
    expect(tap.exchanges.at(-1)!.response.json).toEqual(count);
    const message = await transport.send(forcedToolRequest(8));
    expect(count.input_tokens).toBe(
      message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0),
    );
  });

  it('lists the served model in the Messages list shape', async () => {
    const list = (await transport.listModels!()) as {
      data: { type: string; id: string; display_name: string; created_at: string }[];
      has_more: boolean;
    };
    expect(tap.exchanges.at(-1)!.request.url).toBe('/v1/models');
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).toMatchObject({
      type: 'model',
      id: server.modelPath,
      display_name: server.modelPath,
    });
    expect(Number.isNaN(Date.parse(list.data[0]!.created_at))).toBe(false);
    expect(list.has_more).toBe(false);
  });
});
