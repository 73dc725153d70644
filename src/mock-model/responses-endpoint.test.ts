/**
 * `POST /v1/responses` of the mock model, over HTTP: the Responses API's JSON and event stream, the
 * same script and default behaviour as the chat endpoint (so an agent loop over this wire ends too),
 * and what the transport's Responses wire makes of it.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { accumulateStream } from '../../test/helpers/accumulate-stream.js';
import type { MessageStreamEvent } from '../protocol/messages.js';
import { createTransport } from '../transport/create-transport.js';
import { startMockModel, type MockModelOptions, type MockModelServer } from './mock-model.js';

/** A mock model for one test, closed when the test ends. */
async function start(options: MockModelOptions = {}): Promise<MockModelServer> {
  const server = await startMockModel(options);
  onTestFinished(() => server.close());
  return server;
}

function postResponses(server: MockModelServer, body: unknown): Promise<Response> {
  return fetch(`${server.url}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

interface OutputItem {
  type: string;
  id: string;
  call_id?: string;
  name?: string;
  arguments?: string;
  content?: { type: string; text: string }[];
  summary?: { type: string; text: string }[];
}

interface ResponseObject {
  id: string;
  object: string;
  status: string;
  incomplete_details: { reason: string } | null;
  output: OutputItem[];
  usage: { input_tokens: number; output_tokens: number };
}

/** The SSE frames of a response body: each frame's `event:` name and parsed `data:`. */
async function frames(response: Response): Promise<{ event: string; data: Record<string, unknown> }[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((frame) => frame.trim() !== '')
    .map((frame) => {
      const event = /^event: (.*)$/m.exec(frame)?.[1] ?? '';
      const data = /^data: (.*)$/m.exec(frame)?.[1] ?? 'null';
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}

const weatherTool = {
  type: 'function',
  name: 'get_weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

describe('tpx mock-model: POST /v1/responses', () => {
  it('calls an offered tool once with a call_id, then answers the results in text, ending the loop', async () => {
    const server = await start();
    const question = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather?' }] };
    const first = await postResponses(server, { model: 'm', input: [question], tools: [weatherTool] });
    expect(first.status).toBe(200);
    const firstBody = (await first.json()) as ResponseObject;
    expect(firstBody).toMatchObject({ object: 'response', status: 'completed', incomplete_details: null });
    expect(firstBody.id).toMatch(/^resp_mock\d{6}$/);
    expect(firstBody.output).toEqual([
      {
        id: expect.stringMatching(/^fc_/) as unknown,
        type: 'function_call',
        status: 'completed',
        call_id: 'call_mock000001',
        name: 'get_weather',
        arguments: '{"city":"example"}',
      },
    ]);

    const second = await postResponses(server, {
      model: 'm',
      tools: [weatherTool],
      input: [
        question,
        { type: 'function_call', call_id: 'call_mock000001', name: 'get_weather', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_mock000001', output: '20 C' },
      ],
    });
    const secondBody = (await second.json()) as ResponseObject;
    expect(secondBody.status).toBe('completed');
    expect(secondBody.output.map((item) => item.type)).toEqual(['message']);
    expect(secondBody.output[0]!.content).toEqual([
      { type: 'output_text', text: 'The tools answered: get_weather → 20 C', annotations: [] },
    ]);
    expect(secondBody.usage.input_tokens).toBeGreaterThan(0);
  });

  it('streams the Responses event sequence, named by event: lines and numbered in order', async () => {
    const server = await start({
      script: {
        replies: [
          {
            reasoning: 'Look it up.',
            text: 'Checking now.',
            tool_calls: [{ id: 'call_w', name: 'get_weather', arguments: { city: 'Oslo' } }],
          },
        ],
      },
    });
    const response = await postResponses(server, {
      model: 'm',
      stream: true,
      input: 'Weather in Oslo?',
      tools: [weatherTool],
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const received = await frames(response);
    for (const frame of received) expect(frame.event).toBe(frame.data['type']);
    expect(received.map((frame) => frame.data['sequence_number'])).toEqual(received.map((_, index) => index));
    const types = received.map((frame) => frame.event);
    // Deltas collapsed: the order of the event kinds is the contract.
    expect(types.filter((type, index) => type !== types[index - 1])).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const deltas = received
      .filter((frame) => frame.event === 'response.function_call_arguments.delta')
      .map((frame) => String(frame.data['delta']));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('{"city":"Oslo"}');
    const done = received.at(-1)!.data['response'] as ResponseObject;
    expect(done.output.map((item) => [item.type, item.call_id])).toEqual([
      ['reasoning', undefined],
      ['message', undefined],
      ['function_call', 'call_w'],
    ]);
  });

  it('reports a length finish as incomplete for max_output_tokens, in JSON and in the stream', async () => {
    const script = {
      replies: [
        { text: 'Cut', finish_reason: 'length' },
        { text: 'Cut', finish_reason: 'length' },
      ],
    };
    const server = await start({ script });
    const json = (await (await postResponses(server, { model: 'm', input: 'Hi' })).json()) as ResponseObject;
    expect(json.status).toBe('incomplete');
    expect(json.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    const streamed = await frames(await postResponses(server, { model: 'm', input: 'Hi', stream: true }));
    expect(streamed.at(-1)!.event).toBe('response.incomplete');
  });

  it('cuts a stream with an error event after the scripted number of item events', async () => {
    const server = await start({
      script: {
        replies: [
          {
            text: 'This breaks off here',
            stream_error: { after_chunks: 3, error: { message: 'boom', code: 'server_error' } },
          },
        ],
      },
    });
    const received = await frames(await postResponses(server, { model: 'm', input: 'Hi', stream: true }));
    expect(received.map((frame) => frame.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'error',
    ]);
    expect(received.at(-1)!.data).toMatchObject({ type: 'error', code: 'server_error', message: 'boom' });
  });

  it('refuses a body without input with a 400 naming the parameter (every problem: mock-request.test.ts)', async () => {
    const server = await start();
    const response = await postResponses(server, { model: 'm' });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: Record<string, unknown> };
    expect(error['type']).toBe('invalid_request_error');
    expect([error['param'], error['code'], error['message']]).toEqual([
      'input',
      'missing_required_parameter',
      "Missing required parameter: 'input'.",
    ]);
  });

  it('serves the transport’s Responses wire: a tool round trip, streamed and not, ends in text', async () => {
    const server = await start({ token: 'mock-token' });
    const transport = createTransport({
      env: { TPX_BASE_URL: server.url, TPX_OAUTH_TOKEN: 'mock-token', TPX_WIRE: 'responses' },
      maxRetries: 0,
    });
    try {
      const tools = [{ name: 'get_weather', input_schema: weatherTool.parameters }];
      const question = { role: 'user' as const, content: 'Weather in Oslo?' };
      const events: MessageStreamEvent[] = [];
      for await (const event of transport.stream({
        model: 'm',
        max_tokens: 100,
        tools,
        messages: [question],
      }))
        events.push(event);
      const first = accumulateStream(events);
      expect(first.stop_reason).toBe('tool_use');
      const call = first.content.find((block) => block.type === 'tool_use') as { id: string };
      const second = await transport.send({
        model: 'm',
        max_tokens: 100,
        tools,
        messages: [
          question,
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '-3 C' }] },
        ],
      });
      expect(second.stop_reason).toBe('end_turn');
      expect(second.content).toEqual([{ type: 'text', text: 'The tools answered: get_weather → -3 C' }]);
      expect(server.requests.map((request) => request.path)).toEqual(['/v1/responses', '/v1/responses']);
    } finally {
      await transport.close();
    }
  });
});
