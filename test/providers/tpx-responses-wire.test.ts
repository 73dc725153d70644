/**
 * The Responses wire of the `tpx` provider, called directly over loopback HTTP: the URL it posts to, a
 * whole answer, an answer to a stream request that is not a stream, and a stream's chunks, blanks,
 * errors and end.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isTransportError, type TransportError } from '../../src/errors.js';
import type { MessagesRequest, MessageStreamEvent } from '../../src/protocol/messages.js';
import { httpRequest } from '../../src/providers/http-exchange.js';
import {
  responsesUrl,
  sendOverResponses,
  streamOverResponses,
  type ResponsesWireConfig,
} from '../../src/providers/tpx-responses-wire.js';
import type { PostJson } from '../../src/providers/send-with-bearer.js';
import { DIALECTS } from '../../src/translate/dialects.js';
import { startScriptedServer, step, type ScriptedServer } from '../helpers/scripted-server.js';
import { rejectionOf, testAttempt, type TestAttempt } from './attempt-context.js';

let server: ScriptedServer | undefined;
let attempt: TestAttempt | undefined;
/** The `streaming` flag of each post. */
let posted: boolean[] = [];
afterEach(async () => {
  posted = [];
  await attempt?.close();
  await server?.close();
  attempt = undefined;
  server = undefined;
});

const request: MessagesRequest = {
  model: 'claude-sonnet-4-5',
  max_tokens: 64,
  messages: [{ role: 'user', content: 'Hi' }],
};

const RESPONSE_ID = 'resp_1';
const JSON_TYPE = { 'content-type': 'application/json' };
const MESSAGE_ID = 'msg_1';

function completedResponse(text: string) {
  return {
    id: RESPONSE_ID,
    object: 'response',
    status: 'completed',
    model: 'served-model',
    output: [
      {
        type: 'message',
        id: MESSAGE_ID,
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text, annotations: [] }],
      },
    ],
    usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 },
  };
}

/** The SSE frame of one Responses event. */
function frame(event: Record<string, unknown> & { type: string }): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

const created = frame({
  type: 'response.created',
  response: { id: RESPONSE_ID, object: 'response', status: 'in_progress' },
});
const inProgress = frame({
  type: 'response.in_progress',
  response: { id: RESPONSE_ID, object: 'response', status: 'in_progress' },
});
const itemAdded = frame({
  type: 'response.output_item.added',
  item: { type: 'message', id: MESSAGE_ID, role: 'assistant', status: 'in_progress', content: [] },
});
const delta = (text: string) =>
  frame({ type: 'response.output_text.delta', item_id: MESSAGE_ID, delta: text });
const completed = (text: string) => frame({ type: 'response.completed', response: completedResponse(text) });

async function wire(
  steps: Parameters<typeof startScriptedServer>[0],
  overrides: Partial<ResponsesWireConfig> = {},
): Promise<{ config: ResponsesWireConfig; post: PostJson }> {
  server = await startScriptedServer(steps);
  attempt = testAttempt('tpx');
  const { context } = attempt;
  let ids = 0;
  const config: ResponsesWireConfig = {
    baseUrl: `${server.url}/v1`,
    model: undefined,
    generateId: () => `id_${++ids}`,
    ...overrides,
  };
  const post: PostJson = (url, body, streaming) => {
    posted.push(streaming);
    return httpRequest(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json' }, body },
      context,
    );
  };
  return { config, post };
}

async function collect(stream: AsyncIterable<MessageStreamEvent[]>): Promise<{
  batches: MessageStreamEvent[][];
  error: TransportError | undefined;
}> {
  const batches: MessageStreamEvent[][] = [];
  try {
    for await (const batch of stream) batches.push(batch);
    return { batches, error: undefined };
  } catch (error) {
    if (!isTransportError(error)) throw error;
    return { batches, error };
  }
}

function text(batches: MessageStreamEvent[][]): string {
  return batches
    .flat()
    .map((event) =>
      event.type === 'content_block_delta' && event.delta.type === 'text_delta' ? event.delta.text : '',
    )
    .join('');
}

describe('responsesUrl', () => {
  it('is {base}/responses, without the base’s trailing slashes', () => {
    expect(responsesUrl('http://h:1/v1')).toBe('http://h:1/v1/responses');
    expect(responsesUrl('http://h:1/v1//')).toBe('http://h:1/v1/responses');
    expect(responsesUrl('http://h:1/v1/', DIALECTS.vllm)).toBe('http://h:1/v1/responses');
  });

  it('is the v1 route of an Azure resource, whichever Azure URL the base is', () => {
    const azure = DIALECTS.azure;
    for (const base of [
      'https://r.openai.azure.com',
      'https://r.openai.azure.com/',
      'https://r.openai.azure.com/openai',
      'https://r.openai.azure.com/openai/deployments/gpt-4o',
      'https://r.openai.azure.com/openai/deployments/gpt-4o/',
    ]) {
      expect(responsesUrl(base, azure)).toBe('https://r.openai.azure.com/openai/v1/responses');
    }
    expect(responsesUrl('https://r.openai.azure.com/openai/v1/', azure)).toBe(
      'https://r.openai.azure.com/openai/v1/responses',
    );
    expect(responsesUrl('https://gateway.example/team/openai/deployments/d', azure)).toBe(
      'https://gateway.example/team/openai/v1/responses',
    );
  });

  it('takes only the end of an Azure path for its route, whatever a gateway prefix holds', () => {
    // A gateway path that itself contains `/openai/v1` and `/openai` before the resource's own `/openai`.
    expect(responsesUrl('https://gateway.example/openai/v1/eu/openai', DIALECTS.azure)).toBe(
      'https://gateway.example/openai/v1/eu/openai/v1/responses',
    );
    expect(responsesUrl('https://gateway.example/openai/eu/openai/deployments/d', DIALECTS.azure)).toBe(
      'https://gateway.example/openai/eu/openai/v1/responses',
    );
  });
});

describe('sendOverResponses', () => {
  it('posts the translated request with the configured model and translates the answer', async () => {
    const { config, post } = await wire([step.json(completedResponse('hello'))], { model: 'served-model' });
    const message = await sendOverResponses(request, config, attempt!.context, post);
    expect(message.content).toStrictEqual([{ type: 'text', text: 'hello' }]);
    expect(message.model).toBe('claude-sonnet-4-5');
    expect(message.stop_reason).toBe('end_turn');
    const sent = server!.requests[0]!;
    expect(sent.url).toBe('/v1/responses');
    expect(sent.json).toMatchObject({ model: 'served-model', max_output_tokens: 64 });
    expect(sent.json).not.toHaveProperty('stream', true);
  });

  it('sends the request’s own model when none is configured', async () => {
    const { config, post } = await wire([step.json(completedResponse('hi'))]);
    await sendOverResponses(request, config, attempt!.context, post);
    expect(server!.requests[0]!.json).toMatchObject({ model: 'claude-sonnet-4-5' });
  });

  it('takes a 200 body holding only an error object for that error', async () => {
    const { config, post } = await wire([
      step.json({
        error: { type: 'insufficient_quota', code: 'insufficient_quota', message: 'out of credit' },
      }),
    ]);
    const error = await rejectionOf(sendOverResponses(request, config, attempt!.context, post));
    expect(error).toMatchObject({ code: 'MODEL_EHTTP', status: 402, provider: 'tpx' });
    expect((error as TransportError).message).toContain('out of credit');
  });

  it('reads a body with output as a response even when it also has an error field', async () => {
    const { config, post } = await wire([step.json({ ...completedResponse('fine'), error: null })]);
    const message = await sendOverResponses(request, config, attempt!.context, post);
    expect(message.content).toStrictEqual([{ type: 'text', text: 'fine' }]);
  });

  it('reads a body with output as a response even when its error field is set', async () => {
    const { config, post } = await wire([
      step.json({ ...completedResponse('kept'), error: { code: 'server_error', message: 'ignored' } }),
    ]);
    const message = await sendOverResponses(request, config, attempt!.context, post);
    expect(message.content).toStrictEqual([{ type: 'text', text: 'kept' }]);
    expect(posted).toStrictEqual([false]);
  });

  it('refuses a 200 body that is null or a number as not a response', async () => {
    for (const body of [null, 5]) {
      const { config, post } = await wire([step.json(body)]);
      const error = await rejectionOf(sendOverResponses(request, config, attempt!.context, post));
      expect(error).toMatchObject({ code: 'MODEL_EPROTO', provider: 'tpx' });
      expect((error as Error).message).toMatch(/^the tpx response is not a valid Responses API response: /);
      await attempt!.close();
      await server!.close();
      attempt = undefined;
      server = undefined;
    }
  });

  it('refuses a 200 body that is not JSON, naming the tpx response and quoting it', async () => {
    const { config, post } = await wire([step.text(200, '{"id": "resp_1", "output": [', JSON_TYPE)]);
    const error = await rejectionOf(sendOverResponses(request, config, attempt!.context, post));
    expect(error).toMatchObject({ code: 'MODEL_EPROTO', provider: 'tpx' });
    expect((error as Error).message).toBe(
      'the tpx response is not valid JSON: "{\\"id\\": \\"resp_1\\", \\"output\\": ["',
    );
  });

  it('refuses a body whose error field is null and that has no output, as a response without output', async () => {
    const { config, post } = await wire([step.json({ id: RESPONSE_ID, object: 'response', error: null })]);
    const error = await rejectionOf(sendOverResponses(request, config, attempt!.context, post));
    expect(error).toMatchObject({ code: 'MODEL_EPROTO', status: 502, provider: 'tpx' });
    expect((error as Error).message).toBe(
      'unintelligible upstream answer: the response has no `output` list, so it holds no answer',
    );
  });

  it('refuses a body that is not a Responses API response, saying why', async () => {
    const { config, post } = await wire([step.json({ object: 'response', output: 'nothing' })]);
    const error = await rejectionOf(sendOverResponses(request, config, attempt!.context, post));
    expect(error).toMatchObject({ code: 'MODEL_EPROTO', status: 502, provider: 'tpx' });
    expect((error as Error).message).toMatch(/^the tpx response is not a valid Responses API response: .+/);
  });
});

describe('streamOverResponses', () => {
  it('streams the text of each chunk, with the estimate in message_start, and stops at the end', async () => {
    const { config, post } = await wire([
      step.sse([
        created + inProgress + itemAdded + delta('Hel'),
        delta('lo') + completed('Hello'),
        delta('late'),
      ]),
    ]);
    const { batches, error } = await collect(
      streamOverResponses(request, config, attempt!.context, post, () => Promise.resolve(42)),
    );
    expect(error).toBeUndefined();
    expect(text(batches)).toBe('Hello');
    const start = batches[0]![0]!;
    expect(start.type).toBe('message_start');
    expect(start.type === 'message_start' && start.message.usage.input_tokens).toBe(42);
    expect(batches.flat().at(-1)!.type).toBe('message_stop');
    expect(server!.requests[0]!.json).toMatchObject({ stream: true });
    expect(posted).toStrictEqual([true]);
    expect(batches.every((batch) => batch.length > 0)).toBe(true);
  });

  it('skips blank data and [DONE]', async () => {
    const { config, post } = await wire([
      step.sse([created, 'data: \n\n', itemAdded + delta('a'), 'data: [DONE]\n\n', completed('a')]),
    ]);
    const { batches, error } = await collect(streamOverResponses(request, config, attempt!.context, post));
    expect(error).toBeUndefined();
    expect(text(batches)).toBe('a');
  });

  it('fails on an error event right after the preamble before delivering anything', async () => {
    const { config, post } = await wire([
      step.sse([
        created + inProgress,
        `event: error\ndata: ${JSON.stringify({ type: 'error', code: 'rate_limit_exceeded', message: 'slow down' })}\n\n`,
      ]),
    ]);
    const { batches, error } = await collect(streamOverResponses(request, config, attempt!.context, post));
    expect(batches).toStrictEqual([]);
    expect(error).toMatchObject({ code: 'MODEL_EHTTP', status: 429, provider: 'tpx' });
  });

  it('delivers what a chunk produced before an invalid event in the same chunk, then fails saying why', async () => {
    const { config, post } = await wire([step.sse([created + itemAdded + delta('kept') + 'data: [1]\n\n'])]);
    const { batches, error } = await collect(streamOverResponses(request, config, attempt!.context, post));
    expect(text(batches)).toBe('kept');
    expect(batches).toHaveLength(1);
    expect(error).toMatchObject({ code: 'MODEL_EPROTO', provider: 'tpx' });
    expect(error!.message).toMatch(/^the tpx stream sent an invalid Responses event: .+/);
  });

  it('gives a whole JSON answer to a stream request as the events of that message', async () => {
    const { config, post } = await wire([step.json(completedResponse('whole'))]);
    const { batches, error } = await collect(streamOverResponses(request, config, attempt!.context, post));
    expect(error).toBeUndefined();
    expect(batches).toHaveLength(1);
    expect(text(batches)).toBe('whole');
    expect(batches[0]!.map((event) => event.type)).toStrictEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  it('names the content type and the start of the body of a stream answered with something else', async () => {
    const { config, post } = await wire([step.text(200, '<html>login</html>')]);
    const { batches, error } = await collect(streamOverResponses(request, config, attempt!.context, post));
    expect(batches).toStrictEqual([]);
    expect(error).toMatchObject({ code: 'MODEL_EPROTO', provider: 'tpx' });
    expect(error!.message).toBe(
      'the tpx endpoint answered a stream request with text/html; charset=utf-8, not text/event-stream: "<html>login</html>"',
    );
    await server!.close();
    const untyped = await wire([step.text(200, 'plain', {})]);
    const second = await collect(
      streamOverResponses(request, untyped.config, attempt!.context, untyped.post),
    );
    expect(second.error!.message).toBe(
      'the tpx endpoint answered a stream request with no content type, not text/event-stream: "plain"',
    );
  });
  it('quotes only the first 120 characters of a long body of a stream answered with something else', async () => {
    const page = `<html>${'x'.repeat(300)}</html>`;
    const { config, post } = await wire([step.text(502, page)]);
    const { error } = await collect(streamOverResponses(request, config, attempt!.context, post));
    expect(error!.message).toBe(
      `the tpx endpoint answered a stream request with text/html; charset=utf-8, not text/event-stream: ${JSON.stringify(page.slice(0, 120))}`,
    );
  });

  it('still names the content type when the body of a stream answered with something else is cut off', async () => {
    const { config, post } = await wire([
      step.reset('mid-body', { headers: { 'content-type': 'text/plain' }, body: 'partial' }),
    ]);
    const { batches, error } = await collect(streamOverResponses(request, config, attempt!.context, post));
    expect(batches).toStrictEqual([]);
    expect(error).toMatchObject({ code: 'MODEL_EPROTO', provider: 'tpx' });
    expect(error!.message).toBe(
      'the tpx endpoint answered a stream request with text/plain, not text/event-stream: ""',
    );
  });

  it('skips data that is only whitespace', async () => {
    const { config, post } = await wire([
      step.sse([created + itemAdded + delta('a'), 'data:   \t \n\n', completed('a')]),
    ]);
    const { batches, error } = await collect(streamOverResponses(request, config, attempt!.context, post));
    expect(error).toBeUndefined();
    expect(text(batches)).toBe('a');
  });

  it('fails on event data that is not JSON, naming the tpx stream event and quoting it', async () => {
    const { config, post } = await wire([step.sse([created + itemAdded + delta('a'), 'data: {oops\n\n'])]);
    const { error } = await collect(streamOverResponses(request, config, attempt!.context, post));
    expect(error).toMatchObject({ code: 'MODEL_EPROTO', provider: 'tpx' });
    expect(error!.message).toBe('the tpx stream event is not valid JSON: "{oops"');
  });

  it('maps an error event whose data is a bare error object without a type', async () => {
    const { config, post } = await wire([
      step.sse([
        created,
        `event: error\ndata: ${JSON.stringify({ error: { code: 'rate_limit_exceeded', message: 'slow down' } })}\n\n`,
      ]),
    ]);
    const { batches, error } = await collect(streamOverResponses(request, config, attempt!.context, post));
    expect(batches).toStrictEqual([]);
    expect(error).toMatchObject({ code: 'MODEL_EHTTP', status: 429, provider: 'tpx' });
    expect(error!.message).toContain('slow down');
  });

  it('delivers message_start with the first event past the preamble, even one that adds no content yet', async () => {
    const { config, post } = await wire([
      step.sse(
        [
          created + itemAdded,
          `event: error\ndata: ${JSON.stringify({ type: 'error', code: 'server_error', message: 'crashed' })}\n\n`,
        ],
        { frameDelayMs: 50 },
      ),
    ]);
    const { batches, error } = await collect(streamOverResponses(request, config, attempt!.context, post));
    expect(batches.flat().map((event) => event.type)).toStrictEqual(['message_start']);
    expect(error).toMatchObject({ provider: 'tpx' });
    expect(error!.message).toContain('crashed');
  });

  it('delivers no empty batch for a chunk of the preamble or of blank data', async () => {
    const { config, post } = await wire([
      step.sse(
        [created, inProgress, itemAdded + delta('a'), 'data: \n\n', 'data: [DONE]\n\n', completed('a')],
        {
          frameDelayMs: 30,
        },
      ),
    ]);
    const { batches, error } = await collect(streamOverResponses(request, config, attempt!.context, post));
    expect(error).toBeUndefined();
    expect(text(batches)).toBe('a');
    expect(batches.every((batch) => batch.length > 0)).toBe(true);
  });

  it('stops reading once the response completed, even when more arrives later', async () => {
    const { config, post } = await wire([
      step.sse(
        [created + itemAdded + delta('done'), completed('done'), 'data: {not json\n\n', delta('late')],
        {
          frameDelayMs: 50,
        },
      ),
    ]);
    const { batches, error } = await collect(streamOverResponses(request, config, attempt!.context, post));
    expect(error).toBeUndefined();
    expect(text(batches)).toBe('done');
    expect(batches.flat().at(-1)!.type).toBe('message_stop');
  });
});
