/**
 * The `tpx` provider over the Responses wire (`TPX_WIRE=responses`), end to end over loopback HTTP:
 * what reaches `{base}/responses`, recorded streams replayed through the transport, the reasoning
 * signature restored on the next turn, errors inside the stream, and the selection of the wire.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { isTransportError, type TransportError } from '../../src/errors.js';
import { accumulateStream } from '../helpers/accumulate-stream.js';
import type { MessageStreamEvent } from '../../src/protocol/messages.js';
import { createTransport } from '../../src/transport/create-transport.js';
import type { ModelTransport, TransportOptions } from '../../src/transport/types.js';
import { startScriptedServer, step, type ScriptedServer } from '../helpers/scripted-server.js';

const FIXTURES = new URL('../../src/translate/__fixtures__/upstream-openai-responses/', import.meta.url);
const TOKEN = 'responses-wire-token-0123456789';

let upstream: ScriptedServer | undefined;
afterEach(async () => {
  await upstream?.close();
  upstream = undefined;
});

function transportFor(server: ScriptedServer, options: TransportOptions = {}): ModelTransport {
  return createTransport({
    env: {},
    tpxToken: TOKEN,
    tpxBaseUrl: `${server.url}/v1`,
    tpxWire: 'responses',
    maxRetries: 0,
    ...options,
  });
}

/** A recorded Responses stream as SSE frames: `.sse` files frame by frame, `.chunks.jsonl` as data frames. */
function recordedFrames(file: string): string[] {
  const text = readFileSync(new URL(file, FIXTURES), 'utf8');
  if (file.endsWith('.sse')) return text.split(/(?<=\n\n)/).filter((frame) => frame.trim() !== '');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const type = (JSON.parse(line) as { type: string }).type;
      return `event: ${type}\ndata: ${line}\n\n`;
    });
}

async function collect(stream: AsyncIterable<MessageStreamEvent>): Promise<{
  events: MessageStreamEvent[];
  error: TransportError | undefined;
}> {
  const events: MessageStreamEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
    return { events, error: undefined };
  } catch (error) {
    if (!isTransportError(error)) throw error;
    return { events, error };
  }
}

const weatherTool = {
  name: 'get_weather',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('the Responses wire', () => {
  it('posts a stateless Responses request to {base}/responses with the bearer token', async () => {
    upstream = await startScriptedServer([
      step.json(JSON.parse(readFileSync(new URL('llamacpp/tiny-tools.tool-call.json', FIXTURES), 'utf8'))),
    ]);
    const transport = transportFor(upstream);
    expect(transport.selection.wire).toEqual({ name: 'responses', reason: 'the tpxWire option is set' });
    const message = await transport.send({
      model: 'claude-sonnet-4-5',
      max_tokens: 200,
      system: 'You are terse.',
      tools: [weatherTool],
      tool_choice: { type: 'any' },
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    });
    const request = upstream.requests[0]!;
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/v1/responses');
    expect(request.headers['authorization']).toBe(`Bearer ${TOKEN}`);
    expect(request.json).toMatchObject({
      model: 'claude-sonnet-4-5',
      instructions: 'You are terse.',
      store: false,
      include: ['reasoning.encrypted_content'],
      tool_choice: 'required',
      max_output_tokens: 200,
    });
    expect(request.json).not.toHaveProperty('previous_response_id');
    // The recorded answer was cut at 200 output tokens though it says "completed": the cut call is delivered
    // with its arguments completed, as on the chat wire, and the stop reason says not to run it.
    expect(message.stop_reason).toBe('max_tokens');
    const calls = message.content.filter((block) => block.type === 'tool_use') as { input: unknown }[];
    expect(calls).toHaveLength(3);
    expect(calls[2]!.input).toEqual({ city: null });
  });

  it('streams a recorded OpenAI tool call through the transport as one tool_use block', async () => {
    upstream = await startScriptedServer([step.sse(recordedFrames('openai/gpt-5.1.tool-call.chunks.jsonl'))]);
    const { events, error } = await collect(
      transportFor(upstream).stream({
        model: 'claude-sonnet-4-5',
        max_tokens: 100,
        tools: [weatherTool],
        messages: [{ role: 'user', content: 'Weather in Beijing?' }],
      }),
    );
    expect(error).toBeUndefined();
    expect(accumulateStream(events).content).toEqual([
      {
        type: 'tool_use',
        id: 'call_2FQdm3Br7Qb35YUBSkDR7kue',
        name: 'get_weather',
        input: { city: 'Beijing' },
      },
    ]);
    expect(upstream.requests[0]!.headers['accept']).toBe('text/event-stream');
    expect(upstream.requests[0]!.json).toMatchObject({ stream: true });
  });

  it('fails a stream whose first event is a quota error before anything reaches the caller', async () => {
    upstream = await startScriptedServer([
      step.sse(recordedFrames('openai/gpt-5-nano.error-insufficient-quota.chunks.jsonl')),
    ]);
    const { events, error } = await collect(
      transportFor(upstream).stream({
        model: 'm',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    );
    expect(events).toEqual([]);
    expect(error).toMatchObject({ code: 'MODEL_EHTTP', status: 402 });
    expect(error?.body.error.type).toBe('billing_error');
  });

  it('fails a stream that ends without a terminal event', async () => {
    const frames = recordedFrames('openai/gpt-5.1.tool-call.chunks.jsonl').slice(0, -1);
    upstream = await startScriptedServer([step.sse(frames)]);
    const { events, error } = await collect(
      transportFor(upstream).stream({
        model: 'm',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    );
    expect(error?.code).toBe('MODEL_EPROTO');
    expect(error?.message).toMatch(/no response\.completed/);
    expect(events.map((event) => event.type)).not.toContain('message_stop');
  });

  it('gives the caller the encrypted reasoning in the signature and restores it on the next turn', async () => {
    const reasoning = {
      type: 'reasoning',
      id: 'rs_abc',
      summary: [{ type: 'summary_text', text: 'Use the tool.' }],
      encrypted_content: 'gAAAAB-opaque',
    };
    const call = {
      type: 'function_call',
      id: 'fc_1',
      call_id: 'call_9',
      name: 'get_weather',
      arguments: '{"city":"Oslo"}',
    };
    upstream = await startScriptedServer([
      step.json({ id: 'resp_1', object: 'response', status: 'completed', output: [reasoning, call] }),
      step.json({
        id: 'resp_2',
        object: 'response',
        status: 'completed',
        output: [{ type: 'message', content: [{ type: 'output_text', text: 'Cold.' }] }],
      }),
    ]);
    const transport = transportFor(upstream);
    const first = await transport.send({
      model: 'm',
      max_tokens: 100,
      tools: [weatherTool],
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
    });
    expect(upstream.requests[0]!.json).toMatchObject({ reasoning: { effort: 'low', summary: 'auto' } });
    const thinking = first.content[0] as { type: string; signature: string };
    expect(thinking.type).toBe('thinking');
    expect(thinking.signature).not.toContain('gAAAAB-opaque');

    // A different transport (another replica) serves the next turn.
    const second = await transportFor(upstream).send({
      model: 'm',
      max_tokens: 100,
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_9', content: '-3 C' }] },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'Cold.' }]);
    expect((upstream.requests[1]!.json as { input: unknown[] }).input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Oslo?' }] },
      {
        type: 'reasoning',
        id: 'rs_abc',
        summary: [{ type: 'summary_text', text: 'Use the tool.' }],
        content: [],
        encrypted_content: 'gAAAAB-opaque',
      },
      { type: 'function_call', call_id: 'call_9', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { type: 'function_call_output', call_id: 'call_9', output: '-3 C' },
    ]);
  });

  it('maps an error status from /responses as on the chat wire', async () => {
    upstream = await startScriptedServer([
      step.json(
        {
          error: { message: 'Unsupported parameter', type: 'invalid_request_error', param: 'x', code: null },
        },
        { status: 400 },
      ),
    ]);
    const error = await transportFor(upstream)
      .send({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] })
      .then(
        () => undefined,
        (caught: unknown) => caught as TransportError,
      );
    expect(error).toMatchObject({ code: 'MODEL_EHTTP', status: 400 });
    expect(error?.message).toContain('Unsupported parameter');
  });
});

describe('choosing the wire', () => {
  it('reads TPX_WIRE, defaults to the chat wire, and refuses an unknown value', () => {
    const base = { TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL: 'http://127.0.0.1:9/v1' };
    expect(createTransport({ env: base }).selection.wire).toEqual({
      name: 'chat',
      reason: 'the default of the openai-generic dialect',
    });
    expect(createTransport({ env: { ...base, TPX_WIRE: 'responses' } }).selection.wire).toEqual({
      name: 'responses',
      reason: 'TPX_WIRE is set',
    });
    expect(() => createTransport({ env: { ...base, TPX_WIRE: 'grpc' } })).toThrow(/TPX_WIRE must be "chat"/);
    expect(() =>
      createTransport({
        env: {
          ...base,
          TPX_WIRE: 'responses',
          TPX_DIALECT: 'vertex',
        },
      }),
    ).toThrow(/Vertex AI serves no Responses API/);
  });
});
