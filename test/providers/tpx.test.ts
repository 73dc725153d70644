/**
 * The `tpx` provider called directly (one attempt, no transport around it) against a scripted
 * OpenAI-compatible server on loopback.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TransportError } from '../../src/errors.js';
import type { MessagesRequest, MessageStreamEvent } from '../../src/protocol/messages.js';
import { createTokenSource, type TokenSource } from '../../src/providers/token-source.js';
import { createTpxProvider, type TpxConfig } from '../../src/providers/tpx.js';
import { DIALECTS } from '../../src/translate/dialects.js';
import { startScriptedServer, step, type ScriptedServer, type Step } from '../helpers/scripted-server.js';
import { rejectionOf, testAttempt, type TestAttempt } from './attempt-context.js';
import { ERROR_BODY_LIMIT } from '../../src/providers/upstream-answer.js';

let server: ScriptedServer | undefined;
let attempt: TestAttempt | undefined;
afterEach(async () => {
  await attempt?.close();
  await server?.close();
  attempt = undefined;
  server = undefined;
});

const REQUEST: MessagesRequest = {
  model: 'served-model',
  max_tokens: 16,
  messages: [{ role: 'user', content: 'Hi' }],
};

const COMPLETION = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'served-model',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
};

const STATIC = (token = 'tok-static-abc') =>
  createTokenSource({ kind: 'static', origin: 'TPX_OAUTH_TOKEN', token });

let ids = 0;
async function provider(steps: Step[] | ((record: never) => Step), config: Partial<TpxConfig> = {}) {
  server = await startScriptedServer(steps as Step[]);
  attempt = testAttempt('tpx');
  return createTpxProvider({
    tokens: STATIC(),
    baseUrl: `${server.url}/v1`,
    model: undefined,
    generateId: () => `msg_${++ids}`,
    ...config,
  });
}

function chunk(delta: object, finish: string | null = null, extra: object = {}) {
  return `data: ${JSON.stringify({
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'served-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  })}\n\n`;
}

async function collect(stream: AsyncGenerator<MessageStreamEvent[]>): Promise<MessageStreamEvent[]> {
  const events: MessageStreamEvent[] = [];
  for await (const batch of stream) events.push(...batch);
  return events;
}

/** The batches a stream delivered before it failed, and its failure (fails the test if it ends normally). */
async function batchesUntilFailure(
  stream: AsyncGenerator<MessageStreamEvent[]>,
): Promise<{ delivered: MessageStreamEvent[][]; error: unknown }> {
  const delivered: MessageStreamEvent[][] = [];
  const error = await rejectionOf(
    (async () => {
      for await (const batch of stream) delivered.push(batch);
    })(),
  );
  return { delivered, error };
}

function textOf(events: MessageStreamEvent[]): string {
  return events
    .map((event) =>
      event.type === 'content_block_delta' && event.delta.type === 'text_delta' ? event.delta.text : '',
    )
    .join('');
}

describe('tpx provider: bearer token', () => {
  it('sends the bearer token and reports the status of every answer', async () => {
    const tpx = await provider([step.json(COMPLETION, { headers: { 'x-request-id': 'r1' } })]);
    const message = await tpx.send(REQUEST, {}, attempt!.context, attempt!.report);
    expect(message.content).toStrictEqual([{ type: 'text', text: 'Hello' }]);
    expect(server!.requests[0]!.headers['authorization']).toBe('Bearer tok-static-abc');
    expect(server!.requests[0]!.url).toBe('/v1/chat/completions');
    expect(attempt!.reports.map((report) => report.status)).toStrictEqual([200]);
  });

  it('ends a 401 with MODEL_EAUTH naming the token source, when there is nothing to refresh', async () => {
    const tpx = await provider([
      step.json(
        { error: { message: 'invalid token tok-static-abc' } },
        { status: 401, headers: { 'x-request-id': 'req_7' } },
      ),
    ]);
    const error = await rejectionOf(tpx.send(REQUEST, {}, attempt!.context, attempt!.report));
    expect(error).toMatchObject({ code: 'MODEL_EAUTH', status: 401, provider: 'tpx', retryable: false });
    expect((error as Error).message).toMatch(
      /^the tpx endpoint refused the bearer token from TPX_OAUTH_TOKEN: /,
    );
    expect((error as Error).message).not.toContain('tok-static-abc');
    expect((error as Error).message).toContain('[redacted]');
    expect((error as { body: { error: { type: string } } }).body.error.type).toBe('authentication_error');
    expect(server!.requests).toHaveLength(1);
  });

  it('retries a 401 once with the refreshed token, and says so when that is refused too', async () => {
    let run = 0;
    const tokens = createTokenSource(
      { kind: 'command', origin: 'TPX_OAUTH_TOKEN_COMMAND', command: 'c', timeoutMs: 1 },
      {
        runCommandSync: () => ({ ok: true, output: 'tok-first-1' }),
        runCommand: () => Promise.resolve({ ok: true, output: `tok-fresh-${++run}` }),
      },
    );
    const refused = () => step.json({ error: { message: 'no' } }, { status: 401 });
    const tpx = await provider([refused(), refused()], { tokens });
    const error = await rejectionOf(tpx.send(REQUEST, {}, attempt!.context, attempt!.report));
    expect(server!.requests.map((request) => request.headers['authorization'])).toStrictEqual([
      'Bearer tok-first-1',
      'Bearer tok-fresh-1',
    ]);
    expect((error as Error).message).toMatch(
      /^the tpx endpoint refused the bearer token from TPX_OAUTH_TOKEN_COMMAND, also after the token was refreshed: /,
    );
    expect(attempt!.reports.map((report) => report.status)).toStrictEqual([401, 401]);
  });

  it('gives the cancellation reason when the exchange is cancelled during the refresh', async () => {
    const deadline = new TransportError('MODEL_ETIMEOUT', 'total deadline', { deadline: 'total' });
    const refreshFailure = new Error('the refresh was interrupted');
    const tokens: TokenSource = {
      kind: 'command',
      origin: 'C',
      token: () => Promise.resolve('tok-first-1'),
      redact: (text) => text,
      refresh: () => {
        attempt!.context.cancellation.abort(deadline);
        return Promise.reject(refreshFailure);
      },
    };
    const tpx = await provider([step.json({}, { status: 401 })], { tokens });
    expect(await rejectionOf(tpx.send(REQUEST, {}, attempt!.context, attempt!.report))).toBe(deadline);
  });

  it('passes a failed refresh on when the exchange was not cancelled', async () => {
    const refreshFailure = new TransportError('MODEL_EAUTH', 'command failed');
    const tokens: TokenSource = {
      kind: 'command',
      origin: 'C',
      token: () => Promise.resolve('tok-first-1'),
      redact: (text) => text,
      refresh: () => Promise.reject(refreshFailure),
    };
    const tpx = await provider([step.json({}, { status: 401 })], { tokens });
    expect(await rejectionOf(tpx.send(REQUEST, {}, attempt!.context, attempt!.report))).toBe(refreshFailure);
  });
});

describe('tpx provider: send', () => {
  it('takes a 200 body holding only an error object for that error', async () => {
    const tpx = await provider([step.json({ error: { message: 'model overloaded', code: 503 } })]);
    const error = await rejectionOf(tpx.send(REQUEST, {}, attempt!.context, attempt!.report));
    expect(error).toMatchObject({ provider: 'tpx' });
    expect((error as Error).message).toContain('model overloaded');
  });

  it('refuses a 200 body that is not a chat completion, saying why', async () => {
    const tpx = await provider([step.json({ choices: 'none', error: null })]);
    const error = await rejectionOf(tpx.send(REQUEST, {}, attempt!.context, attempt!.report));
    expect(error).toMatchObject({ code: 'MODEL_EPROTO', provider: 'tpx' });
    expect((error as Error).message).toMatch(/^the tpx response is not a valid chat completion: ./);
  });

  it('explains a 404 about the model with the model it sent', async () => {
    const tpx = await provider([
      step.json({ error: { message: 'The model `served-model` does not exist.' } }, { status: 404 }),
    ]);
    const error = await rejectionOf(tpx.send(REQUEST, {}, attempt!.context, attempt!.report));
    expect((error as Error).message).toMatch(/^the upstream does not serve the model "served-model" \(/);
  });

  it('explains a 404 of the route with TPX_BASE_URL', async () => {
    const tpx = await provider([step.text(404, 'Not Found', { 'content-type': 'text/plain' })], {});
    const error = await rejectionOf(tpx.send(REQUEST, {}, attempt!.context, attempt!.report));
    expect((error as Error).message).toContain('check TPX_BASE_URL');
  });
});

describe('tpx provider: stream', () => {
  it('translates a JSON answer to a stream request as a stream', async () => {
    const tpx = await provider([
      step.json(COMPLETION, { headers: { 'content-type': 'application/json; charset=utf-8' } }),
    ]);
    const events = await collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report));
    expect(events.map((event) => event.type)).toStrictEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(textOf(events)).toBe('Hello');
    expect(server!.requests[0]!.headers['accept']).toBe('text/event-stream');
  });

  it('names the content type and the start of the body of a stream answered with something else', async () => {
    const tpx = await provider([
      step.text(200, 'y'.repeat(300), { 'content-type': 'text/plain' }),
      step.text(200, '', {}),
    ]);
    const error = await rejectionOf(collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report)));
    expect(error).toMatchObject({
      code: 'MODEL_EPROTO',
      provider: 'tpx',
      message: `the tpx endpoint answered a stream request with text/plain, not text/event-stream: "${'y'.repeat(120)}"`,
    });
    const untyped = await rejectionOf(collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report)));
    expect((untyped as Error).message).toBe(
      'the tpx endpoint answered a stream request with no content type, not text/event-stream: ""',
    );
  });

  it('skips pings and blank data, stops at [DONE], and ignores what follows it', async () => {
    const tpx = await provider([
      step.sse([
        'event: ping\ndata: {"whatever":1}\n\n',
        'data: {"type":"ping"}\n\n',
        'data: \n\n',
        chunk({ role: 'assistant', content: 'Hel' }),
        chunk({ content: 'lo' }),
        chunk({}, 'stop'),
        'data: [DONE]\n\n',
        'data: not json at all\n\n',
      ]),
    ]);
    const events = await collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report));
    expect(textOf(events)).toBe('Hello');
    expect(events.at(-1)).toStrictEqual({ type: 'message_stop' });
    expect(events.filter((event) => event.type === 'message_start')).toHaveLength(1);
  });

  it('takes a data ping that also has choices for a chunk', async () => {
    const tpx = await provider([
      step.sse([
        chunk({ role: 'assistant', content: 'Hi' }, null, { type: 'ping' }),
        chunk({}, 'stop'),
        'data: [DONE]\n\n',
      ]),
    ]);
    const events = await collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report));
    expect(textOf(events)).toBe('Hi');
  });

  it('finishes a stream that ends without [DONE]', async () => {
    const tpx = await provider([step.sse([chunk({ role: 'assistant', content: 'Hi' }), chunk({}, 'stop')])]);
    const events = await collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report));
    expect(textOf(events)).toBe('Hi');
    expect(events.at(-1)).toStrictEqual({ type: 'message_stop' });
  });

  it('raises an error event with the error it carries, before anything was delivered', async () => {
    const tpx = await provider([
      step.sse(['event: error\ndata: {"error":{"message":"rate limited","code":429}}\n\n']),
      step.sse(['event: error\ndata: {"message":"bare error object"}\n\n']),
      step.sse(['event: error\ndata:\n\n']),
    ]);
    const wrapped = await rejectionOf(collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report)));
    expect((wrapped as Error).message).toContain('rate limited');
    const bare = await rejectionOf(collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report)));
    expect((bare as Error).message).toContain('bare error object');
    const empty = await rejectionOf(collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report)));
    expect(empty).toMatchObject({ provider: 'tpx' });
  });

  it('delivers what a chunk produced before an error in the same chunk, then fails', async () => {
    const tpx = await provider([
      step.sse([
        chunk({ role: 'assistant', content: 'Hi' }) + 'event: error\ndata: {"error":{"message":"boom"}}\n\n',
      ]),
    ]);
    const { delivered: batches, error } = await batchesUntilFailure(
      tpx.stream(REQUEST, {}, attempt!.context, attempt!.report),
    );
    const delivered = batches.flat();
    expect((error as Error).message).toContain('boom');
    expect(delivered[0]!.type).toBe('message_start');
    expect(textOf(delivered)).toBe('Hi');
  });

  it('refuses an invalid chunk, saying why', async () => {
    const tpx = await provider([step.sse(['data: {"choices":"x"}\n\n'])]);
    const error = await rejectionOf(collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report)));
    expect(error).toMatchObject({ code: 'MODEL_EPROTO', provider: 'tpx' });
    expect((error as Error).message).toMatch(/^the tpx stream sent an invalid chunk: ./);
  });
});

describe('tpx provider: count_tokens', () => {
  it('estimates locally for a dialect without a counting route', async () => {
    const tpx = await provider([]);
    const count = await tpx.countTokens!(REQUEST, {}, attempt!.context, attempt!.report);
    expect(count.input_tokens).toBeGreaterThan(0);
    expect(server!.requests).toHaveLength(0);
  });

  it("asks vLLM's /tokenize at the server root", async () => {
    const tpx = await provider([step.json({ count: 42 })], { dialect: DIALECTS.vllm });
    expect(await tpx.countTokens!(REQUEST, {}, attempt!.context, attempt!.report)).toStrictEqual({
      input_tokens: 42,
    });
    expect(server!.requests[0]!.url).toBe('/tokenize');
    expect(server!.requests[0]!.json).toMatchObject({ model: 'served-model', add_generation_prompt: true });
    expect(server!.requests[0]!.headers['authorization']).toBe('Bearer tok-static-abc');
  });

  it("asks llama.cpp's /apply-template then /tokenize with the templated prompt", async () => {
    const tpx = await provider([step.json({ prompt: '<s>Hi' }), step.json({ tokens: [1, 2, 3] })], {
      dialect: DIALECTS.llamacpp,
    });
    expect(await tpx.countTokens!(REQUEST, {}, attempt!.context, attempt!.report)).toStrictEqual({
      input_tokens: 3,
    });
    expect(server!.requests.map((request) => request.url)).toStrictEqual(['/apply-template', '/tokenize']);
    expect(server!.requests[1]!.json).toStrictEqual({
      content: '<s>Hi',
      add_special: true,
      parse_special: true,
    });
  });

  it('estimates when the server has no such route or answers something else', async () => {
    const tpx = await provider(
      [step.json({}, { status: 404 }), step.json({ no: 'prompt' }), step.text(200, 'not json', {})],
      { dialect: DIALECTS.llamacpp },
    );
    const estimate = (await tpx.countTokens!(REQUEST, {}, attempt!.context, attempt!.report)).input_tokens;
    expect(estimate).toBeGreaterThan(0);
    expect((await tpx.countTokens!(REQUEST, {}, attempt!.context, attempt!.report)).input_tokens).toBe(
      estimate,
    );
    expect(server!.requests).toHaveLength(2);
  });

  it('fails on a refused token instead of estimating', async () => {
    const tpx = await provider([step.json({}, { status: 401 })], { dialect: DIALECTS.vllm });
    expect(await rejectionOf(tpx.countTokens!(REQUEST, {}, attempt!.context, attempt!.report))).toMatchObject(
      {
        code: 'MODEL_EAUTH',
      },
    );
  });
});

describe('tpx provider: models and inspect', () => {
  it('lists the served models, and falls back to the configured model on an error or an unusable list', async () => {
    const tpx = await provider(
      [
        step.json({ object: 'list', data: [{ id: 'a', object: 'model' }] }),
        step.json({}, { status: 404 }),
        step.json({ x: 1 }),
      ],
      { model: 'configured' },
    );
    const listed = (await tpx.listModels!({}, attempt!.context, attempt!.report)) as {
      data: { id: string }[];
    };
    expect(listed.data.map((entry) => entry.id)).toStrictEqual(['a']);
    expect(server!.requests[0]).toMatchObject({ method: 'GET', url: '/v1/models' });
    for (let index = 0; index < 2; index++) {
      const fallback = (await tpx.listModels!({}, attempt!.context, attempt!.report)) as {
        data: { id: string }[];
      };
      expect(fallback.data.map((entry) => entry.id)).toStrictEqual(['configured']);
    }
  });

  it('falls back to the configured model when /models answers an error status, even with a list in it', async () => {
    const tpx = await provider([step.json({ object: 'list', data: [{ id: 'listed' }] }, { status: 404 })], {
      model: 'configured',
    });
    const listed = (await tpx.listModels!({}, attempt!.context, attempt!.report)) as {
      data: { id: string }[];
    };
    expect(listed.data.map((entry) => entry.id)).toStrictEqual(['configured']);
  });

  it('fails the model list on a refused token or a network failure', async () => {
    const tpx = await provider([step.json({}, { status: 401 }), step.reset('before-headers')]);
    expect(await rejectionOf(tpx.listModels!({}, attempt!.context, attempt!.report))).toMatchObject({
      code: 'MODEL_EAUTH',
    });
    expect(await rejectionOf(tpx.listModels!({}, attempt!.context, attempt!.report))).toMatchObject({
      code: 'MODEL_ETRANSPORT',
    });
  });

  it('asks /props of llama.cpp-like servers only', async () => {
    const models = () => step.json({ data: [{ id: 'a' }] });
    const generic = await provider([models(), step.json({ n_ctx: 4096 })]);
    expect((await generic.inspect!({}, attempt!.context, attempt!.report)).contextWindow).toStrictEqual({
      tokens: 4096,
      source: `${server!.url}/props`,
    });
    await attempt!.close();
    await server!.close();
    const llama = await provider([models(), step.json({ n_ctx: 2048 })], { dialect: DIALECTS.llamacpp });
    expect((await llama.inspect!({}, attempt!.context, attempt!.report)).contextWindow?.tokens).toBe(2048);
    await attempt!.close();
    await server!.close();
    const vllm = await provider([models(), step.json({ n_ctx: 1 })], { dialect: DIALECTS.vllm });
    expect((await vllm.inspect!({}, attempt!.context, attempt!.report)).contextWindow).toBeUndefined();
    expect(server!.requests).toHaveLength(1);
  });
});

describe('tpx provider: context editing', () => {
  const PLACEHOLDER = '[This tool result was cleared to save context.]';
  // Long enough for three slices of the counter, with runs of non-space characters longer than it
  // breaks, two of them in the first slice.
  const LONG_RESULT =
    'alpha beta '.repeat(20) +
    'x'.repeat(150) +
    ' gamma ' +
    'y'.repeat(150) +
    ' ' +
    'delta epsilon '.repeat(150) +
    'z'.repeat(300);
  const TOOLS = [{ name: 'read', input_schema: { type: 'object' as const } }];
  const CLEAR_TOOL_USES = {
    edits: [
      {
        type: 'clear_tool_uses_20250919',
        trigger: { type: 'tool_uses', value: 0 },
        keep: { type: 'tool_uses', value: 0 },
      },
    ],
  };
  const withToolResult = (contextManagement: object | undefined): MessagesRequest => ({
    ...REQUEST,
    tools: TOOLS,
    messages: [
      { role: 'user', content: 'Read the log' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: LONG_RESULT }] },
    ],
    ...(contextManagement === undefined ? {} : { context_management: contextManagement }),
  });

  /** What count_tokens says for one user message of `text`: the estimate the edit's figures use. */
  async function countOf(tpx: ReturnType<typeof createTpxProvider>, text: string): Promise<number> {
    const count = await tpx.countTokens!(
      { model: 'served-model', messages: [{ role: 'user', content: text }] },
      {},
      attempt!.context,
      attempt!.report,
    );
    return count.input_tokens;
  }

  it('clears the tool result before sending, and reports the tokens freed as count_tokens counts them', async () => {
    const tpx = await provider([step.json(COMPLETION)]);
    const message = await tpx.send(withToolResult(CLEAR_TOOL_USES), {}, attempt!.context, attempt!.report);
    const freed = (await countOf(tpx, LONG_RESULT)) - (await countOf(tpx, PLACEHOLDER));
    expect(freed).toBeGreaterThan(500);
    expect(message).toStrictEqual({
      id: 'msg_chatcmpl-1',
      type: 'message',
      role: 'assistant',
      model: 'served-model',
      content: [{ type: 'text', text: 'Hello' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: message.usage,
      context_management: {
        applied_edits: [
          { type: 'clear_tool_uses_20250919', cleared_tool_uses: 1, cleared_input_tokens: freed },
        ],
      },
    });
    const sent = server!.requests[0]!.json as { messages: { role: string; content: unknown }[] };
    expect(
      sent.messages.filter((entry) => entry.role === 'tool').map((entry) => entry.content),
    ).toStrictEqual([PLACEHOLDER]);
  });

  it('reports the applied edits on message_delta of a stream, and on no other event', async () => {
    const tpx = await provider([
      step.sse([chunk({ role: 'assistant', content: 'Done' }), chunk({}, 'stop'), 'data: [DONE]\n\n']),
    ]);
    const events = await collect(
      tpx.stream(withToolResult(CLEAR_TOOL_USES), {}, attempt!.context, attempt!.report),
    );
    const freed = (await countOf(tpx, LONG_RESULT)) - (await countOf(tpx, PLACEHOLDER));
    const delta = events.find((event) => event.type === 'message_delta');
    expect((delta as { context_management?: unknown }).context_management).toStrictEqual({
      applied_edits: [
        { type: 'clear_tool_uses_20250919', cleared_tool_uses: 1, cleared_input_tokens: freed },
      ],
    });
    expect(events.filter((event) => 'context_management' in event).map((event) => event.type)).toStrictEqual([
      'message_delta',
    ]);
    expect(textOf(events)).toBe('Done');
  });

  it('reports the tokens of cleared thinking as count_tokens counts them', async () => {
    const thinking = 'Let me think about the weather in Paris and what to wear there. '.repeat(8);
    const tpx = await provider([step.json(COMPLETION)]);
    const request: MessagesRequest = {
      ...REQUEST,
      messages: [
        { role: 'user', content: 'One' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking, signature: 's1' },
            { type: 'text', text: 'A' },
          ],
        },
        { role: 'user', content: 'Two' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Short.', signature: 's2' },
            { type: 'text', text: 'B' },
          ],
        },
        { role: 'user', content: 'Three' },
      ],
      context_management: { edits: [{ type: 'clear_thinking_20251015' }] },
    };
    const message = await tpx.send(request, {}, attempt!.context, attempt!.report);
    const expected = (await countOf(tpx, thinking)) - 8;
    expect(expected).toBeGreaterThan(50);
    expect(message['context_management']).toStrictEqual({
      applied_edits: [
        { type: 'clear_thinking_20251015', cleared_thinking_turns: 1, cleared_input_tokens: expected },
      ],
    });
  });

  it('answers a request without context management with no context_management, on a message or a stream', async () => {
    const tpx = await provider([
      step.json(COMPLETION),
      step.sse([chunk({ role: 'assistant', content: 'Hi' }), chunk({}, 'stop'), 'data: [DONE]\n\n']),
    ]);
    const message = await tpx.send(withToolResult(undefined), {}, attempt!.context, attempt!.report);
    expect('context_management' in message).toBe(false);
    const events = await collect(
      tpx.stream(withToolResult(undefined), {}, attempt!.context, attempt!.report),
    );
    expect(events.some((event) => 'context_management' in event)).toBe(false);
    const sent = server!.requests[0]!.json as { messages: { role: string; content: unknown }[] };
    expect(
      sent.messages.filter((entry) => entry.role === 'tool').map((entry) => entry.content),
    ).toStrictEqual([LONG_RESULT]);
  });
});

describe('tpx provider: failures that are answers in themselves', () => {
  async function withShortFirstByte(steps: Step[], config: Partial<TpxConfig> = {}) {
    const tpx = await provider(steps, config);
    await attempt!.close();
    attempt = testAttempt('tpx', { deadlines: { firstByteTimeoutMs: 100 } });
    return tpx;
  }

  it('fails count_tokens on a network failure or a deadline instead of estimating', async () => {
    const tpx = await withShortFirstByte([step.reset('before-headers'), step.noHeaders()], {
      dialect: DIALECTS.vllm,
    });
    expect(await rejectionOf(tpx.countTokens!(REQUEST, {}, attempt!.context, attempt!.report))).toMatchObject(
      {
        code: 'MODEL_ETRANSPORT',
        provider: 'tpx',
      },
    );
    expect(await rejectionOf(tpx.countTokens!(REQUEST, {}, attempt!.context, attempt!.report))).toMatchObject(
      {
        code: 'MODEL_ETIMEOUT',
        deadline: 'first-byte',
      },
    );
  });

  it('fails the model list on a deadline instead of falling back', async () => {
    const tpx = await withShortFirstByte([step.noHeaders()], { model: 'configured' });
    expect(await rejectionOf(tpx.listModels!({}, attempt!.context, attempt!.report))).toMatchObject({
      code: 'MODEL_ETIMEOUT',
      deadline: 'first-byte',
    });
  });
});

describe('tpx provider: stream answers that are not a stream', () => {
  it('explains a 404 about the model of a stream with the model it sent', async () => {
    const tpx = await provider([
      step.json({ error: { message: 'The model `served-model` does not exist.' } }, { status: 404 }),
    ]);
    const error = await rejectionOf(collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report)));
    expect(error).toMatchObject({ code: 'MODEL_EHTTP', status: 404, provider: 'tpx' });
    expect((error as Error).message).toMatch(/^the upstream does not serve the model "served-model" \(/);
  });

  it('quotes no body when the body of a stream answered with something else is too large to read', async () => {
    const tpx = await provider([
      step.text(200, 'q'.repeat(ERROR_BODY_LIMIT + 10), { 'content-type': 'text/plain' }),
    ]);
    const error = await rejectionOf(collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report)));
    expect((error as Error).message).toBe(
      'the tpx endpoint answered a stream request with text/plain, not text/event-stream: ""',
    );
  });

  it('quotes an error event whose data is not JSON', async () => {
    const tpx = await provider([step.sse(['event: error\ndata: upstream exploded\n\n'])]);
    const error = await rejectionOf(collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report)));
    expect(error).toMatchObject({ provider: 'tpx' });
    expect((error as Error).message).toContain('upstream exploded');
  });
});

describe('tpx provider: what goes out', () => {
  it('sends JSON asking for JSON, with the max-tokens field the configuration names, and notes the model', async () => {
    const tpx = await provider([step.json(COMPLETION)], { maxTokensField: 'max_completion_tokens' });
    attempt!.context.notes = {};
    await tpx.send(REQUEST, {}, attempt!.context, attempt!.report);
    const sent = server!.requests[0]!;
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.headers['accept']).toBe('application/json');
    expect(sent.json).toMatchObject({ model: 'served-model', max_completion_tokens: 16 });
    expect('max_tokens' in (sent.json as object)).toBe(false);
    expect(attempt!.context.notes).toStrictEqual({ upstreamModel: 'served-model' });
  });

  it('notes the model of a stream too', async () => {
    const tpx = await provider([step.sse([chunk({ role: 'assistant', content: 'Hi' }), chunk({}, 'stop')])]);
    attempt!.context.notes = {};
    await collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report));
    expect(attempt!.context.notes).toStrictEqual({ upstreamModel: 'served-model' });
  });

  it("sends Azure's api-version the configuration names", async () => {
    const tpx = await provider([step.json(COMPLETION)], {
      dialect: DIALECTS.azure,
      azureApiVersion: '2030-01-01',
    });
    await tpx.send(REQUEST, {}, attempt!.context, attempt!.report);
    expect(server!.requests[0]!.url).toBe(
      '/v1/openai/deployments/served-model/chat/completions?api-version=2030-01-01',
    );
  });

  it('asks a counting route for JSON, sending JSON', async () => {
    const tpx = await provider([step.json({ count: 5 })], { dialect: DIALECTS.vllm });
    await tpx.countTokens!(REQUEST, {}, attempt!.context, attempt!.report);
    expect(server!.requests[0]!.headers['content-type']).toBe('application/json');
    expect(server!.requests[0]!.headers['accept']).toBe('application/json');
  });

  it('asks for the model list with a GET for JSON', async () => {
    const tpx = await provider([step.json({ data: [{ id: 'a' }] })]);
    await tpx.listModels!({}, attempt!.context, attempt!.report);
    expect(server!.requests[0]).toMatchObject({ method: 'GET', url: '/v1/models', bodyText: '' });
    expect(server!.requests[0]!.headers['accept']).toBe('application/json');
    expect(server!.requests[0]!.headers['authorization']).toBe('Bearer tok-static-abc');
  });
});

describe('tpx provider: answers in detail', () => {
  it('is named tpx', () => {
    expect(
      createTpxProvider({
        tokens: STATIC(),
        baseUrl: 'http://127.0.0.1:9',
        model: undefined,
        generateId: () => 'x',
      }).name,
    ).toBe('tpx');
  });

  it("keeps the refused answer's request id and headers on MODEL_EAUTH", async () => {
    const tpx = await provider([
      step.json({ error: { message: 'no' } }, { status: 401, headers: { 'x-request-id': 'req_7' } }),
    ]);
    const error = await rejectionOf(tpx.send(REQUEST, {}, attempt!.context, attempt!.report));
    expect(error).toMatchObject({ code: 'MODEL_EAUTH', requestId: 'req_7' });
    expect((error as TransportError).headers['x-request-id']).toBe('req_7');
  });

  it('reads a 200 body with both an error and choices as the completion', async () => {
    const tpx = await provider([step.json({ ...COMPLETION, error: { message: 'ignored' } })]);
    const message = await tpx.send(REQUEST, {}, attempt!.context, attempt!.report);
    expect(message.content).toStrictEqual([{ type: 'text', text: 'Hello' }]);
  });

  it('reads a 299 answer as a success, on a message and on a stream', async () => {
    const tpx = await provider([
      step.json(COMPLETION, { status: 299 }),
      step.sse([chunk({ role: 'assistant', content: 'Hi' }), chunk({}, 'stop')], { status: 299 }),
      step.json({ data: [{ id: 'listed' }] }, { status: 299 }),
    ]);
    expect((await tpx.send(REQUEST, {}, attempt!.context, attempt!.report)).content).toStrictEqual([
      { type: 'text', text: 'Hello' },
    ]);
    expect(textOf(await collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report)))).toBe('Hi');
    const listed = (await tpx.listModels!({}, attempt!.context, attempt!.report)) as {
      data: { id: string }[];
    };
    expect(listed.data.map((entry) => entry.id)).toStrictEqual(['listed']);
  });

  it('puts the count_tokens estimate in message_start of a stream', async () => {
    const tpx = await provider([step.sse([chunk({ role: 'assistant', content: 'Hi' }), chunk({}, 'stop')])]);
    const events = await collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report));
    const estimate = (await tpx.countTokens!(REQUEST, {}, attempt!.context, attempt!.report)).input_tokens;
    const start = events[0] as Extract<MessageStreamEvent, { type: 'message_start' }>;
    expect(start.type).toBe('message_start');
    expect(start.message.usage.input_tokens).toBe(estimate);
  });

  it('delivers nothing when the first chunk is an error', async () => {
    const tpx = await provider([step.sse(['event: error\ndata: {"error":{"message":"at once"}}\n\n'])]);
    const { delivered, error } = await batchesUntilFailure(
      tpx.stream(REQUEST, {}, attempt!.context, attempt!.report),
    );
    expect((error as Error).message).toContain('at once');
    expect(delivered).toStrictEqual([]);
  });

  it('delivers nothing when an error follows only data pings, so the attempt can still be retried', async () => {
    const tpx = await provider([
      step.sse(['data: {"type":"ping"}\n\n', 'event: error\ndata: {"error":{"message":"after pings"}}\n\n'], {
        frameDelayMs: 30,
      }),
    ]);
    const { delivered, error } = await batchesUntilFailure(
      tpx.stream(REQUEST, {}, attempt!.context, attempt!.report),
    );
    expect((error as Error).message).toContain('after pings');
    expect(delivered).toStrictEqual([]);
  });

  it('reads the usage of a last chunk that has no choices field at all', async () => {
    const usageOnly = `data: ${JSON.stringify({
      id: 'c1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'served-model',
      usage: { prompt_tokens: 3, completion_tokens: 7, total_tokens: 10 },
    })}\n\n`;
    const tpx = await provider([
      step.sse([
        chunk({ role: 'assistant', content: 'Hi' }),
        chunk({}, 'stop'),
        usageOnly,
        'data: [DONE]\n\n',
      ]),
    ]);
    const events = await collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report));
    const delta = events.find((event) => event.type === 'message_delta') as Extract<
      MessageStreamEvent,
      { type: 'message_delta' }
    >;
    expect(delta.usage.output_tokens).toBe(7);
  });

  it('refuses a chunk that is JSON null as an invalid chunk', async () => {
    const tpx = await provider([step.sse([chunk({ role: 'assistant', content: 'Hi' }), 'data: null\n\n'])]);
    const error = await rejectionOf(collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report)));
    expect(error).toMatchObject({ code: 'MODEL_EPROTO', provider: 'tpx' });
    expect((error as Error).message).toMatch(/^the tpx stream sent an invalid chunk: /);
  });

  it('refuses a stream that ends with no chunk at all, having delivered nothing', async () => {
    const tpx = await provider([step.sse([])]);
    const { delivered, error } = await batchesUntilFailure(
      tpx.stream(REQUEST, {}, attempt!.context, attempt!.report),
    );
    expect(error).toMatchObject({ code: 'MODEL_EPROTO' });
    expect((error as Error).message).toContain('stream ended before the model finished');
    expect(delivered).toStrictEqual([]);
  });
});

describe('tpx provider: the token and its refusals in detail', () => {
  /** A token source that has a new token on every refresh, so only the provider's rule limits them. */
  function everFresh(): TokenSource & { refreshed: number } {
    const source = {
      kind: 'command' as const,
      origin: 'C',
      refreshed: 0,
      token: () => Promise.resolve('tok-0'),
      redact: (text: string) => text,
      refresh: () => Promise.resolve(`tok-${++source.refreshed}`),
    };
    return source;
  }

  it('refreshes the token once per exchange, however many new tokens the source has', async () => {
    const tokens = everFresh();
    const refused = () => step.json({ error: { message: 'no' } }, { status: 401 });
    const tpx = await provider([refused(), refused(), step.json(COMPLETION)], { tokens });
    expect(await rejectionOf(tpx.send(REQUEST, {}, attempt!.context, attempt!.report))).toMatchObject({
      code: 'MODEL_EAUTH',
    });
    expect(server!.requests.map((request) => request.headers['authorization'])).toStrictEqual([
      'Bearer tok-0',
      'Bearer tok-1',
    ]);
    expect(tokens.refreshed).toBe(1);
  });

  it('passes the failure of a refresh on when the exchange was cancelled by the caller', async () => {
    const refreshFailure = new Error('the refresh was interrupted');
    const tokens: TokenSource = {
      kind: 'command',
      origin: 'C',
      token: () => Promise.resolve('tok-first-1'),
      redact: (text) => text,
      refresh: () => {
        attempt!.context.cancellation.abort('caller left');
        return Promise.reject(refreshFailure);
      },
    };
    const tpx = await provider([step.json({}, { status: 401 })], { tokens });
    expect(await rejectionOf(tpx.send(REQUEST, {}, attempt!.context, attempt!.report))).toBe(refreshFailure);
  });

  it('says whose token was refused, quoting the upstream answer', async () => {
    const tpx = await provider([step.json({ error: { message: 'token expired' } }, { status: 401 })]);
    const error = await rejectionOf(tpx.send(REQUEST, {}, attempt!.context, attempt!.report));
    expect((error as Error).message).toBe(
      'the tpx endpoint refused the bearer token from TPX_OAUTH_TOKEN: 401 Unauthorized: token expired',
    );
  });

  it('names the provider of a 200 body that is not JSON', async () => {
    const tpx = await provider([step.text(200, 'not json', { 'content-type': 'application/json' })]);
    expect(await rejectionOf(tpx.send(REQUEST, {}, attempt!.context, attempt!.report))).toMatchObject({
      code: 'MODEL_EPROTO',
      provider: 'tpx',
      message: 'the tpx response is not valid JSON: "not json"',
    });
  });

  it('explains a 404 of the route naming the method and the URL called', async () => {
    const tpx = await provider([step.text(404, 'Not Found', { 'content-type': 'text/plain' })]);
    const error = await rejectionOf(tpx.send(REQUEST, {}, attempt!.context, attempt!.report));
    expect(error).toMatchObject({ code: 'MODEL_EHTTP', status: 404, provider: 'tpx' });
    expect((error as Error).message).toMatch(
      new RegExp(`^the upstream has no endpoint at POST ${server!.url}/v1/chat/completions \\(404: `),
    );
    expect((error as Error).message).toMatch(
      /; check TPX_BASE_URL \(now http:\/\/127\.0\.0\.1:\d+\/v1\) and the port$/,
    );
  });
});

describe('tpx provider: the Responses wire', () => {
  const RESPONSE = {
    id: 'resp_1',
    object: 'response',
    status: 'completed',
    model: 'served-model',
    output: [
      {
        type: 'message',
        id: 'msg_1',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Hello', annotations: [] }],
      },
    ],
    usage: { input_tokens: 3, output_tokens: 1, total_tokens: 4 },
  };

  it('posts JSON to {base}/responses with the bearer token, asking for JSON', async () => {
    const tpx = await provider([step.json(RESPONSE)], { wire: 'responses' });
    const message = await tpx.send(REQUEST, {}, attempt!.context, attempt!.report);
    expect(message.content).toStrictEqual([{ type: 'text', text: 'Hello' }]);
    const sent = server!.requests[0]!;
    expect(sent).toMatchObject({ method: 'POST', url: '/v1/responses' });
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.headers['accept']).toBe('application/json');
    expect(sent.headers['authorization']).toBe('Bearer tok-static-abc');
  });

  it('asks for events on a stream, and explains a 404 of the route', async () => {
    const tpx = await provider([step.text(404, 'Not Found', { 'content-type': 'text/plain' })], {
      wire: 'responses',
    });
    const error = await rejectionOf(collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report)));
    expect(server!.requests[0]!.headers['accept']).toBe('text/event-stream');
    expect(error).toMatchObject({ code: 'MODEL_EHTTP', status: 404, provider: 'tpx' });
    expect((error as Error).message).toMatch(
      new RegExp(`^the upstream has no endpoint at POST ${server!.url}/v1/responses \\(404: `),
    );
  });
  it('reads a 299 answer as a success', async () => {
    const tpx = await provider([step.json(RESPONSE, { status: 299 })], { wire: 'responses' });
    const message = await tpx.send(REQUEST, {}, attempt!.context, attempt!.report);
    expect(message.content).toStrictEqual([{ type: 'text', text: 'Hello' }]);
  });
});

describe('tpx provider: more answers in detail', () => {
  it('refuses a 200 body of a JSON string or null as not a chat completion', async () => {
    const tpx = await provider([
      step.text(200, '"just text"', { 'content-type': 'application/json' }),
      step.text(200, 'null', { 'content-type': 'application/json' }),
    ]);
    for (let round = 0; round < 2; round++) {
      const error = await rejectionOf(tpx.send(REQUEST, {}, attempt!.context, attempt!.report));
      expect(error).toMatchObject({ code: 'MODEL_EPROTO', provider: 'tpx' });
      expect((error as Error).message).toMatch(/^the tpx response is not a valid chat completion: ./);
    }
  });

  it('reads counting answers and model lists far larger than an error body', async () => {
    const prompt = `<s>${'word '.repeat(20_000)}`;
    const tpx = await provider(
      [
        step.json({ prompt }),
        step.json({ tokens: Array.from({ length: 20_001 }, (_, index) => index) }),
        step.json({ data: Array.from({ length: 2_000 }, (_, index) => ({ id: `model-${index}` })) }),
      ],
      { dialect: DIALECTS.llamacpp },
    );
    expect(await tpx.countTokens!(REQUEST, {}, attempt!.context, attempt!.report)).toStrictEqual({
      input_tokens: 20_001,
    });
    expect((server!.requests[1]!.json as { content: string }).content).toBe(prompt);
    const listed = (await tpx.listModels!({}, attempt!.context, attempt!.report)) as { data: unknown[] };
    expect(listed.data).toHaveLength(2_000);
  });

  it('reads a 299 counting answer as a count', async () => {
    const tpx = await provider([step.json({ count: 42 }, { status: 299 })], { dialect: DIALECTS.vllm });
    expect(await tpx.countTokens!(REQUEST, {}, attempt!.context, attempt!.report)).toStrictEqual({
      input_tokens: 42,
    });
  });

  it('gives up counting and listing when the caller cancels, instead of estimating or falling back', async () => {
    const tpx = await provider([step.noHeaders(), step.noHeaders()], { dialect: DIALECTS.vllm, model: 'm' });
    const counting = tpx.countTokens!(REQUEST, {}, attempt!.context, attempt!.report);
    await vi.waitFor(() => expect(server!.requests[0]?.receivedAtMs).toBeGreaterThan(0));
    attempt!.context.cancellation.abort('caller left');
    expect(await rejectionOf(counting)).toMatchObject({ code: 'MODEL_EABORTED' });
    await attempt!.close();
    attempt = testAttempt('tpx');
    const listing = tpx.listModels!({}, attempt.context, attempt.report);
    await vi.waitFor(() => expect(server!.requests[1]?.receivedAtMs).toBeGreaterThan(0));
    attempt.context.cancellation.abort('caller left');
    expect(await rejectionOf(listing)).toMatchObject({ code: 'MODEL_EABORTED' });
  });

  it('builds message_start from the request model and a generated id', async () => {
    const tpx = await provider([step.sse([chunk({ role: 'assistant', content: 'Hi' }), chunk({}, 'stop')])], {
      generateId: () => 'msg_generated',
    });
    const events = await collect(
      tpx.stream({ ...REQUEST, model: 'asked-model' }, {}, attempt!.context, attempt!.report),
    );
    const start = events[0] as Extract<MessageStreamEvent, { type: 'message_start' }>;
    expect(start.message.model).toBe('asked-model');
    expect(start.message.id).toMatch(/^msg_/);
  });

  it('streams text spread over chunks that arrive one by one in full, up to [DONE]', async () => {
    const tpx = await provider([
      step.sse(
        [
          chunk({ role: 'assistant', content: 'Hel' }),
          chunk({ content: 'lo, ' }),
          chunk({ content: 'world' }),
          chunk({}, 'stop'),
          'data: [DONE]\n\n',
        ],
        { frameDelayMs: 30 },
      ),
    ]);
    const events = await collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report));
    expect(textOf(events)).toBe('Hello, world');
    expect(events.at(-1)!.type).toBe('message_stop');
  });

  it('delivers no empty batch when the stream ends without [DONE] after its finish reason and usage', async () => {
    const tpx = await provider([
      step.sse(
        [
          chunk({ role: 'assistant', content: 'Hi' }),
          chunk({}, 'stop'),
          chunk({}, null, {
            choices: [],
            usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
          }),
        ],
        { frameDelayMs: 30 },
      ),
    ]);
    const batches: MessageStreamEvent[][] = [];
    for await (const batch of tpx.stream(REQUEST, {}, attempt!.context, attempt!.report)) batches.push(batch);
    expect(textOf(batches.flat())).toBe('Hi');
    expect(batches.flat().at(-1)!.type).toBe('message_stop');
    expect(batches.every((batch) => batch.length > 0)).toBe(true);
  });

  it('delivers no empty batch for a chunk of pings', async () => {
    const tpx = await provider([
      step.sse(
        [
          chunk({ role: 'assistant', content: 'Hi' }),
          'data: {"type":"ping"}\n\n',
          chunk({}, 'stop'),
          'data: [DONE]\n\n',
        ],
        {
          frameDelayMs: 30,
        },
      ),
    ]);
    const batches: MessageStreamEvent[][] = [];
    for await (const batch of tpx.stream(REQUEST, {}, attempt!.context, attempt!.report)) batches.push(batch);
    expect(textOf(batches.flat())).toBe('Hi');
    expect(batches.every((batch) => batch.length > 0)).toBe(true);
  });

  it('inspects with GETs for JSON carrying the bearer token', async () => {
    const tpx = await provider([step.json({ data: [{ id: 'a' }] }), step.json({ n_ctx: 8 })]);
    await tpx.inspect!({}, attempt!.context, attempt!.report);
    expect(
      server!.requests.map((request) => [
        request.method,
        request.headers['accept'],
        request.headers['authorization'],
      ]),
    ).toStrictEqual([
      ['GET', 'application/json', 'Bearer tok-static-abc'],
      ['GET', 'application/json', 'Bearer tok-static-abc'],
    ]);
  });
  it('estimates when a counting route answers an error status, even with a count in it, or an answer too large', async () => {
    const tpx = await provider(
      [step.json({ count: 7 }, { status: 500 }), step.oversize(2 * 1024 * 1024, { declareLength: true })],
      { dialect: DIALECTS.vllm },
    );
    const first = (await tpx.countTokens!(REQUEST, {}, attempt!.context, attempt!.report)).input_tokens;
    const second = (await tpx.countTokens!(REQUEST, {}, attempt!.context, attempt!.report)).input_tokens;
    const estimate = (
      await createTpxProvider({
        tokens: STATIC(),
        baseUrl: 'http://127.0.0.1:9/v1',
        model: undefined,
        generateId: () => 'x',
      }).countTokens!(REQUEST, {}, attempt!.context, attempt!.report)
    ).input_tokens;
    expect([first, second]).toStrictEqual([estimate, estimate]);
    expect(estimate).not.toBe(7);
    expect(server!.requests).toHaveLength(2);
  });

  it('names the message after the model the caller asked for', async () => {
    const tpx = await provider([step.json(COMPLETION)]);
    const message = await tpx.send(
      { ...REQUEST, model: 'asked-model' },
      {},
      attempt!.context,
      attempt!.report,
    );
    expect(message.model).toBe('asked-model');
  });
});

describe('tpx provider: stream rules in detail', () => {
  it('skips a ping event whatever its data, and data of only whitespace', async () => {
    const tpx = await provider([
      step.sse([
        'event: ping\ndata: keep-alive\n\n',
        'data:    \n\n',
        chunk({ role: 'assistant', content: 'Hi' }),
        chunk({}, 'stop'),
        'data: [DONE]\n\n',
      ]),
    ]);
    expect(textOf(await collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report)))).toBe('Hi');
  });

  it('stops reading at [DONE] even when more arrives later', async () => {
    const tpx = await provider([
      step.sse(
        [
          chunk({ role: 'assistant', content: 'Hi' }),
          chunk({}, 'stop'),
          'data: [DONE]\n\n',
          'data: {broken\n\n',
        ],
        {
          frameDelayMs: 30,
        },
      ),
    ]);
    const events = await collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report));
    expect(events.map((event) => event.type)).toStrictEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  it('takes [DONE] as the end even without a finish_reason', async () => {
    const tpx = await provider([step.sse([chunk({ role: 'assistant', content: 'Hi' }), 'data: [DONE]\n\n'])]);
    const events = await collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report));
    expect(textOf(events)).toBe('Hi');
    expect(events.at(-1)).toStrictEqual({ type: 'message_stop' });
  });

  it('ends a stream without [DONE] with exactly the closing events', async () => {
    const tpx = await provider([step.sse([chunk({ role: 'assistant', content: 'Hi' }), chunk({}, 'stop')])]);
    const events = await collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report));
    expect(events.map((event) => event.type)).toStrictEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  it('says which stream chunk was not JSON', async () => {
    const tpx = await provider([step.sse(['data: {broken\n\n'])]);
    expect(
      await rejectionOf(collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report))),
    ).toMatchObject({
      code: 'MODEL_EPROTO',
      provider: 'tpx',
      message: 'the tpx stream chunk is not valid JSON: "{broken"',
    });
  });

  it('raises an error event whose data is null or empty as an upstream error of the provider', async () => {
    const tpx = await provider([
      step.sse(['event: error\ndata: null\n\n']),
      step.sse(['event: error\ndata:\n\n']),
    ]);
    const nullData = await rejectionOf(collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report)));
    const empty = await rejectionOf(collect(tpx.stream(REQUEST, {}, attempt!.context, attempt!.report)));
    expect(nullData).toMatchObject({ provider: 'tpx', message: 'upstream stream error: null' });
    expect(empty).toMatchObject({ provider: 'tpx', message: 'upstream stream error: {}' });
  });

  it('falls back to the configured model on a model list under an error status, or one too large', async () => {
    const tpx = await provider(
      [
        step.json({ data: [{ id: 'from-an-error' }] }, { status: 404 }),
        step.oversize(2 * 1024 * 1024, { declareLength: true }),
      ],
      { model: 'configured' },
    );
    for (let round = 0; round < 2; round++) {
      const listed = (await tpx.listModels!({}, attempt!.context, attempt!.report)) as {
        data: { id: string }[];
      };
      expect(listed.data.map((entry) => entry.id)).toStrictEqual(['configured']);
    }
  });
});
