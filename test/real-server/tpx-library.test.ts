/**
 * The `tpx` provider through the library against a real llama.cpp server (dialect `llamacpp`,
 * `/v1/chat/completions`), with a recording tap in between that shows what really crossed the wire.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accumulateStream } from '../helpers/accumulate-stream.js';
import { createSession, createTransport, decodeToolId, isTransportError } from '../../src/index.js';
import { readContextSize } from '../../src/translate/read-upstream-catalog.js';
import type { ModelTransport } from '../../src/transport/types.js';
import { startLlamaServer, type LlamaServer } from './llama-server.js';
import {
  claudeCodeShape,
  collect,
  findCutToolCall,
  forcedToolRequest,
  isCompleteJson,
  toolUses,
  validMessage,
  withoutIds,
} from './real-server-support.js';
import { startRecordingTap, type RecordingTap } from './recording-tap.js';

interface ChatToolCall {
  id: string;
  function: { name: string; arguments: string };
}
interface ChatAnswer {
  choices: { finish_reason: string; message: { tool_calls?: ChatToolCall[] } }[];
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    prompt_tokens_details?: { cached_tokens?: number };
  };
}

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
    maxRetries: 0,
  });
});

afterAll(async () => {
  await transport?.close();
  await tap?.close();
  await server?.stop();
});

/** The server's own answer to the last request that went through the tap. */
function lastAnswer(): ChatAnswer {
  return tap.exchanges.at(-1)!.response.json as ChatAnswer;
}

describe('tpx provider against llama.cpp: tool calls', () => {
  it('answers a forced tool call with tool_use blocks whose input follows the schema', async () => {
    const message = validMessage(await transport.send(forcedToolRequest(400)));
    expect(message.stop_reason).toBe('tool_use');
    const calls = toolUses(message);
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      expect(call.name).toBe('get_weather');
      expect(call.id).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(Object.keys(call.input as object).sort()).toEqual(['city', 'unit']);
    }
    const sent = tap.exchanges.at(-1)!.request;
    expect(sent.url).toBe('/v1/chat/completions');
    expect((sent.json as { tool_choice: unknown }).tool_choice).toBe('required');
  });

  it('gives parallel calls distinct ids that decode to the ids the server made', async () => {
    const message = await transport.send(forcedToolRequest(400));
    const calls = toolUses(message);
    const serverIds = lastAnswer().choices[0]!.message.tool_calls!.map((call) => call.id);
    expect(calls.length).toBe(serverIds.length);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(new Set(calls.map((call) => call.id)).size).toBe(calls.length);
    expect(calls.map((call) => decodeToolId(call.id))).toEqual(serverIds);
  });

  it('streams the same answer send gives: forced parallel calls in a grammar-valid event stream', async () => {
    const sent = await transport.send(forcedToolRequest(400));
    const events = await collect(transport.stream(forcedToolRequest(400)));
    const streamed = accumulateStream(events);
    expect(streamed.stop_reason).toBe(sent.stop_reason);
    expect(withoutIds(streamed)).toEqual(withoutIds(sent));
    expect(streamed.usage.output_tokens).toBe(sent.usage.output_tokens);
  });

  it('sends the server its own tool-call ids back with the tool results (seen on the wire)', async () => {
    const request = forcedToolRequest(400);
    const first = await transport.send(request);
    const serverIds = lastAnswer().choices[0]!.message.tool_calls!.map((call) => call.id);
    const calls = toolUses(first);
    const followUp = {
      ...request,
      tool_choice: { type: 'auto' as const },
      max_tokens: 16,
      messages: [
        ...request.messages,
        { role: 'assistant' as const, content: first.content },
        {
          role: 'user' as const,
          content: calls.map((call) => ({
            type: 'tool_result' as const,
            tool_use_id: call.id,
            content: 'sunny, 21 °C',
          })),
        },
      ],
    };
    const second = validMessage(await transport.send(followUp));
    expect(second.type).toBe('message');
    const sent = tap.exchanges.at(-1)!.request.json as {
      messages: { role: string; tool_call_id?: string; tool_calls?: { id: string }[] }[];
    };
    const assistant = sent.messages.find((message) => message.role === 'assistant')!;
    expect(assistant.tool_calls!.map((call) => call.id)).toEqual(serverIds);
    expect(
      sent.messages.filter((message) => message.role === 'tool').map((message) => message.tool_call_id),
    ).toEqual(serverIds);
    expect(tap.exchanges.at(-1)!.response.status).toBe(200);
  });
});

describe('tpx provider against llama.cpp: a tool call cut by the output limit', () => {
  let maxTokens: number;

  beforeAll(async () => {
    // A max_tokens at which the server ends with finish_reason "length" inside a tool call's arguments.
    maxTokens = await findCutToolCall(server.chatBaseUrl);
  });

  it('is answered, not refused: stop_reason max_tokens and a tool_use with object input for every call', async () => {
    const message = validMessage(await transport.send(forcedToolRequest(maxTokens)));
    const serverChoice = lastAnswer().choices[0]!;
    expect(serverChoice.finish_reason).toBe('length');
    const serverCalls = serverChoice.message.tool_calls!;
    expect(serverCalls.some((call) => !isCompleteJson(call.function.arguments))).toBe(true);
    expect(message.stop_reason).toBe('max_tokens');
    const calls = toolUses(message);
    expect(calls.map((call) => decodeToolId(call.id))).toEqual(serverCalls.map((call) => call.id));
    for (const call of calls) expect(typeof call.input).toBe('object');
    // The cut call keeps what arrived: llama.cpp cuts a second call at "{", which is {}.
    const cut = serverCalls.findIndex((call) => !isCompleteJson(call.function.arguments));
    if (serverCalls[cut]!.function.arguments === '{') expect(calls[cut]!.input).toEqual({});
  });

  it('streams to the same message send gives (accumulate(stream) = send)', async () => {
    const sent = await transport.send(forcedToolRequest(maxTokens));
    const events = await collect(transport.stream(forcedToolRequest(maxTokens)));
    const streamed = accumulateStream(events);
    expect(streamed.stop_reason).toBe('max_tokens');
    expect(withoutIds(streamed)).toEqual(withoutIds(sent));
  });

  it('leaves the session owing a tool_result for every delivered call, the cut one included', async () => {
    const session = createSession(transport);
    const request = forcedToolRequest(maxTokens);
    const cut = await session.send(request);
    const calls = toolUses(cut);
    expect(session.pending).toEqual(calls.map((call) => call.id));
    const answer = (ids: string[]) => ({
      ...request,
      tool_choice: { type: 'auto' as const },
      max_tokens: 8,
      messages: [
        ...request.messages,
        { role: 'assistant' as const, content: cut.content },
        {
          role: 'user' as const,
          content: ids.map((id) => ({
            type: 'tool_result' as const,
            tool_use_id: id,
            content: 'x',
            is_error: true,
          })),
        },
      ],
    });
    const partial = await session
      .send(answer(calls.slice(0, -1).map((call) => call.id)))
      .catch((error: unknown) => error);
    expect(isTransportError(partial) && partial.code).toBe('MODEL_EPAIRING');
    const whole = await session.send(answer(calls.map((call) => call.id)));
    expect(whole.type).toBe('message');
  });
});

describe('tpx provider against llama.cpp: what the llamacpp dialect reads', () => {
  it("reports usage from the server's counts, cached prompt tokens as cache reads", async () => {
    const request = forcedToolRequest(30);
    await transport.send(request);
    const message = await transport.send(request);
    const usage = lastAnswer().usage;
    expect(usage.prompt_tokens_details?.cached_tokens).toBeGreaterThan(0);
    expect(message.usage).toEqual({
      input_tokens: usage.prompt_tokens - usage.prompt_tokens_details!.cached_tokens!,
      output_tokens: usage.completion_tokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: usage.prompt_tokens_details!.cached_tokens,
    });
  });

  it('reports the usage of a stream in message_delta, cached tokens included', async () => {
    const request = forcedToolRequest(30);
    await transport.send(request);
    const events = await collect(transport.stream(request));
    const sent = tap.exchanges.at(-1)!.request.json as { stream_options?: unknown };
    expect(sent.stream_options).toEqual({ include_usage: true });
    const usage = accumulateStream(events).usage;
    expect(usage.cache_read_input_tokens).toBeGreaterThan(0);
    expect(usage.output_tokens).toBe(30);
  });

  it('lists the served model in the Messages list shape', async () => {
    const list = (await transport.listModels!()) as { data: { type: string; id: string }[] };
    expect(list.data.map((model) => model.type)).toEqual(['model']);
    expect(list.data[0]!.id).toBe(server.modelPath);
  });

  it('counts tokens on the server: exactly the prompt tokens it reports for the same request', async () => {
    const request = forcedToolRequest(1);
    const { max_tokens: _maxTokens, ...countRequest } = request;
    const count = await transport.countTokens!(countRequest);
    const routes = tap.exchanges.slice(-2).map((exchange) => exchange.request.url);
    expect(routes).toEqual(['/apply-template', '/tokenize']);
    await transport.send(request);
    expect(count.input_tokens).toBe(lastAnswer().usage.prompt_tokens);
  });

  it('reads the context size from /props', async () => {
    const props = await (await fetch(`${server.url}/props`)).json();
    expect(readContextSize(props)).toBe(4096);
  });

  it('sends Claude Code’s system messages folded: one system message first, the later one in place', async () => {
    const message = validMessage(await transport.send(claudeCodeShape()));
    expect(message.type).toBe('message');
    const sent = tap.exchanges.at(-1)!.request.json as { messages: { role: string; content: string }[] };
    expect(sent.messages.map((entry) => entry.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(sent.messages[3]!.content).toContain('<system-message>\nPlan mode is on.\n</system-message>');
  });

  it('maps a context overflow to 400 invalid_request_error saying “prompt is too long” and naming the context size', async () => {
    const error = await transport
      .send({ model: 'tiny', max_tokens: 8, messages: [{ role: 'user', content: 'word '.repeat(1500) }] })
      .catch((caught: unknown) => caught);
    expect(isTransportError(error)).toBe(true);
    if (!isTransportError(error)) return;
    expect(error.code).toBe('MODEL_EHTTP');
    expect(error.status).toBe(400);
    expect(error.body.error.type).toBe('invalid_request_error');
    expect(error.message).toMatch(
      /exceed_context_size_error: prompt is too long: \d+ tokens > 4096 maximum; request \(\d+ tokens\) exceeds the available context size \(4096 tokens\)/,
    );
  });
});
