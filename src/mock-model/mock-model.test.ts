import { afterEach, describe, expect, it } from 'vitest';

import { startMockModel, type MockModelOptions, type MockModelServer } from './mock-model.js';

const servers: MockModelServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function start(options: MockModelOptions = {}): Promise<MockModelServer> {
  const server = await startMockModel(options);
  servers.push(server);
  return server;
}

function postChat(
  server: MockModelServer,
  body: unknown,
  init: { headers?: Record<string, string>; signal?: AbortSignal; path?: string } = {},
): Promise<Response> {
  return fetch(`${server.url}${init.path ?? '/chat/completions'}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...init.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(init.signal === undefined ? {} : { signal: init.signal }),
  });
}

interface WireToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}

interface WireMessage {
  role: string;
  content: string | null;
  refusal: null;
  reasoning_content?: string;
  tool_calls?: WireToolCall[];
}

interface WireUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

interface WireCompletion {
  id: string;
  object: string;
  model: string;
  choices: { index: number; message: WireMessage; logprobs: null; finish_reason: string }[];
  usage: WireUsage;
}

interface WireToolCallDelta {
  index: number;
  id?: string;
  type?: string;
  function: { name?: string; arguments?: string };
}

interface WireChunk {
  id: string;
  object: string;
  choices: {
    index: number;
    delta: {
      role?: string;
      content?: string | null;
      reasoning_content?: string;
      tool_calls?: WireToolCallDelta[];
    };
    finish_reason: string | null;
  }[];
  usage?: WireUsage | null;
  error?: unknown;
}

async function readCompletion(response: Response): Promise<WireCompletion> {
  expect(response.status).toBe(200);
  return (await response.json()) as WireCompletion;
}

/** The first choice's message of a JSON completion. */
async function readMessage(response: Response): Promise<WireMessage> {
  return (await readCompletion(response)).choices[0]!.message;
}

function toolNames(message: WireMessage): string[] {
  return (message.tool_calls ?? []).map((call) => call.function.name);
}

/** The chunks of an SSE body, checking the framing: `data:` lines only, `[DONE]` last. */
async function readChunks(response: Response): Promise<WireChunk[]> {
  expect(response.status).toBe(200);
  const text = await response.text();
  expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  const frames = text.split('\n\n').filter((frame) => frame !== '');
  expect(frames.every((frame) => frame.startsWith('data: '))).toBe(true);
  return frames.slice(0, -1).map((frame) => JSON.parse(frame.slice('data: '.length)) as WireChunk);
}

/** Rebuilds the non-streaming `message` and `finish_reason` from stream chunks, as a client would. */
function reassemble(chunks: readonly WireChunk[]): { message: WireMessage; finish_reason: string | null } {
  const message: WireMessage = { role: '', content: null, refusal: null };
  const calls: WireToolCall[] = [];
  let finishReason: string | null = null;
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      const delta = choice.delta;
      if (delta.role !== undefined) message.role = delta.role;
      if (typeof delta.content === 'string') message.content = (message.content ?? '') + delta.content;
      if (delta.reasoning_content !== undefined) {
        message.reasoning_content = (message.reasoning_content ?? '') + delta.reasoning_content;
      }
      for (const call of delta.tool_calls ?? []) {
        const known = (calls[call.index] ??= {
          id: call.id ?? '',
          type: call.type ?? '',
          function: { name: call.function.name ?? '', arguments: '' },
        });
        known.function.arguments += call.function.arguments ?? '';
      }
      if (choice.finish_reason !== null) finishReason = choice.finish_reason;
    }
  }
  if (message.content === '' && calls.length > 0) message.content = null;
  if (calls.length > 0) message.tool_calls = calls;
  return { message, finish_reason: finishReason };
}

const ADD_TOOL = {
  type: 'function',
  function: {
    name: 'add',
    description: 'Adds two numbers.',
    parameters: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
  },
};
const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: {
      type: 'object',
      properties: {
        city: { type: 'string' },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        days: { type: 'integer', minimum: 1, maximum: 7 },
      },
      required: ['city'],
    },
  },
};
const NOW_TOOL = {
  type: 'function',
  function: { name: 'now', parameters: { type: 'object', properties: {} } },
};

const TOOL_REQUEST = {
  model: 'any-model',
  messages: [{ role: 'user', content: 'What is 2 + 3, and the weather in Paris?' }],
  tools: [ADD_TOOL, WEATHER_TOOL],
};

/** Tools shaped like Claude Code's: the acting ones first, as it offers them. */
const AGENT_TOOLS = [
  ['Agent', { description: { type: 'string' }, prompt: { type: 'string' } }, ['description', 'prompt']],
  [
    'Bash',
    {
      command: { type: 'string' },
      dangerouslyDisableSandbox: { type: 'boolean' },
      run_in_background: { type: 'boolean' },
    },
    ['command'],
  ],
  ['Glob', { pattern: { type: 'string' }, path: { type: 'string' } }, ['pattern']],
  ['Grep', { pattern: { type: 'string' }, multiline: { type: 'boolean' } }, ['pattern']],
  ['Read', { file_path: { type: 'string' }, offset: { type: 'number' } }, ['file_path']],
  ['Edit', { file_path: { type: 'string' }, replace_all: { type: 'boolean' } }, ['file_path']],
  ['Write', { file_path: { type: 'string' }, content: { type: 'string' } }, ['file_path', 'content']],
  ['WebFetch', { url: { type: 'string', format: 'uri' } }, ['url']],
  ['TodoWrite', { todos: { type: 'array', items: { type: 'string' } } }, ['todos']],
  ['KillShell', { shell_id: { type: 'string' } }, ['shell_id']],
].map(([name, properties, required]) => ({
  type: 'function',
  function: { name: name as string, parameters: { type: 'object', properties, required } },
}));

describe("default behaviour with an agent's tools", () => {
  it('ends a Claude Code-shaped loop: one round of read-only tools with required fields only, then text', async () => {
    const server = await start();
    const user = { role: 'user', content: 'Look around this repository and summarise it.' };
    const first = await readMessage(
      await postChat(server, { model: 'm', messages: [user], tools: AGENT_TOOLS, tool_choice: 'auto' }),
    );
    expect(toolNames(first)).toEqual(['Glob', 'Grep', 'Read']);
    for (const call of first.tool_calls!) {
      const argumentsObject = JSON.parse(call.function.arguments) as Record<string, unknown>;
      expect(Object.values(argumentsObject).every((value) => value !== true)).toBe(true);
    }
    expect(JSON.parse(first.tool_calls![1]!.function.arguments)).toEqual({ pattern: 'example' });
    const results = first.tool_calls!.map((call) => ({
      role: 'tool',
      tool_call_id: call.id,
      content: `${call.function.name} found nothing`,
    }));
    const history = [user, { role: 'assistant', content: null, tool_calls: first.tool_calls }, ...results];
    const second = await readMessage(
      await postChat(server, { model: 'm', messages: history, tools: AGENT_TOOLS, tool_choice: 'required' }),
    );
    expect(second.tool_calls).toBeUndefined();
    expect(second.content).toContain('Glob → Glob found nothing');
    // The user goes on in the same conversation: one tool round was enough, the model answers in text.
    const third = await readMessage(
      await postChat(server, {
        model: 'm',
        messages: [
          ...history,
          { role: 'assistant', content: second.content },
          { role: 'user', content: 'and now?' },
        ],
        tools: AGENT_TOOLS,
      }),
    );
    expect(third.tool_calls).toBeUndefined();
    expect(third.content).toBe('You said: and now?');
    expect(server.requests).toHaveLength(3);
  });

  it('calls none of the tools when every offered tool looks like it acts', async () => {
    const server = await start();
    const message = await readMessage(
      await postChat(server, {
        model: 'm',
        messages: [{ role: 'user', content: 'go' }],
        tools: AGENT_TOOLS.filter((tool) => ['Agent', 'Bash', 'Write'].includes(tool.function.name)),
      }),
    );
    expect(message.tool_calls).toBeUndefined();
    expect(message.content).toBe('You said: go');
  });

  it('still calls an acting tool that tool_choice names', async () => {
    const server = await start();
    const message = await readMessage(
      await postChat(server, {
        model: 'm',
        messages: [{ role: 'user', content: 'go' }],
        tools: AGENT_TOOLS,
        tool_choice: { type: 'function', function: { name: 'Bash' } },
      }),
    );
    expect(toolNames(message)).toEqual(['Bash']);
    expect(JSON.parse(message.tool_calls![0]!.function.arguments)).toEqual({ command: 'example' });
  });
});

describe('default behaviour', () => {
  it('calls every offered tool once, with arguments built from each schema', async () => {
    const server = await start();
    const response = await postChat(server, TOOL_REQUEST);
    expect(response.headers.get('content-type')).toBe('application/json');
    const body = await readCompletion(response);
    expect(body).toMatchObject({ object: 'chat.completion', model: 'tpx-mock-1' });
    expect(body.id).toMatch(/^chatcmpl-/);
    const choice = body.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    const calls = choice.message.tool_calls!;
    expect(toolNames(choice.message)).toEqual(['add', 'get_weather']);
    for (const call of calls) {
      expect(call.type).toBe('function');
      expect(call.id).toMatch(/^call_[A-Za-z0-9]+$/);
    }
    expect(calls[0]!.id).not.toBe(calls[1]!.id);
    expect(JSON.parse(calls[0]!.function.arguments)).toEqual({ a: 2, b: 3 });
    // Only the required fields: the optional `unit` and `days` are left out.
    expect(JSON.parse(calls[1]!.function.arguments)).toEqual({ city: 'example' });
    const usage = body.usage;
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    expect(usage.completion_tokens).toBeGreaterThan(0);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
  });

  it('streams the same tool calls as the JSON answer: a header delta per call, then argument fragments', async () => {
    const jsonServer = await start();
    const streamServer = await start();
    const expected = await readCompletion(await postChat(jsonServer, TOOL_REQUEST));
    const response = await postChat(streamServer, {
      ...TOOL_REQUEST,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const chunks = await readChunks(response);

    const usageChunk = chunks.at(-1)!;
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toEqual(expected.usage);
    const finishChunk = chunks.at(-2)!;
    expect(finishChunk.choices).toEqual([
      { index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' },
    ]);
    for (const chunk of chunks.slice(0, -1)) {
      expect(chunk).toMatchObject({ object: 'chat.completion.chunk', id: chunks[0]!.id, usage: null });
    }

    expect(chunks[0]!.choices[0]!.delta).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { index: 0, id: 'call_mock000001', type: 'function', function: { name: 'add', arguments: '' } },
      ],
    });
    const addFragments = chunks
      .map((chunk) => chunk.choices[0]?.delta.tool_calls?.[0])
      .filter((call) => call?.index === 0 && call.id === undefined);
    expect(addFragments.length).toBeGreaterThan(1);
    for (const fragment of addFragments) expect(Object.keys(fragment!).sort()).toEqual(['function', 'index']);

    expect(reassemble(chunks.slice(0, -1))).toEqual({
      message: expected.choices[0]!.message,
      finish_reason: expected.choices[0]!.finish_reason,
    });
  });

  it('sends no usage at all in a stream that did not ask for it', async () => {
    const server = await start();
    const chunks = await readChunks(await postChat(server, { ...TOOL_REQUEST, stream: true }));
    expect(chunks.every((chunk) => !('usage' in chunk) && chunk.choices.length === 1)).toBe(true);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('calls one tool, a read-only-looking one first, when parallel_tool_calls is false', async () => {
    const server = await start();
    const message = await readMessage(
      await postChat(server, { ...TOOL_REQUEST, parallel_tool_calls: false }),
    );
    expect(toolNames(message)).toEqual(['get_weather']);
  });

  it('calls only the function that tool_choice names', async () => {
    const server = await start();
    const toolChoice = { type: 'function', function: { name: 'get_weather' } };
    const message = await readMessage(await postChat(server, { ...TOOL_REQUEST, tool_choice: toolChoice }));
    expect(toolNames(message)).toEqual(['get_weather']);
  });

  it('calls at most four tools at once', async () => {
    const server = await start();
    const tools = ['a', 'b', 'c', 'd', 'e'].map((name) => ({ type: 'function', function: { name } }));
    const message = await readMessage(await postChat(server, { ...TOOL_REQUEST, tools }));
    expect(toolNames(message)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('answers in text when tool_choice is none', async () => {
    const server = await start();
    const body = await readCompletion(await postChat(server, { ...TOOL_REQUEST, tool_choice: 'none' }));
    expect(body.choices[0]).toMatchObject({
      finish_reason: 'stop',
      message: { content: 'You said: What is 2 + 3, and the weather in Paris?' },
    });
  });

  it('keeps tool-call ids unique across requests', async () => {
    const server = await start();
    const ids: string[] = [];
    for (let round = 0; round < 3; round += 1) {
      const message = await readMessage(await postChat(server, TOOL_REQUEST));
      ids.push(...(message.tool_calls ?? []).map((call) => call.id));
    }
    expect(ids).toHaveLength(6);
    expect(new Set(ids).size).toBe(6);
  });

  it('answers tool results with a text naming each tool and what it returned', async () => {
    const server = await start();
    const request = {
      model: 'any-model',
      tools: [ADD_TOOL, NOW_TOOL],
      messages: [
        { role: 'user', content: 'Add and tell the time.' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_x1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } },
            { id: 'call_x2', type: 'function', function: { name: 'now', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_x1', content: '5' },
        { role: 'tool', tool_call_id: 'call_x2', content: [{ type: 'text', text: '2026-11-29T10:00:00Z' }] },
      ],
    };
    const expectedText = 'The tools answered: add → 5; now → 2026-11-29T10:00:00Z';
    const body = await readCompletion(await postChat(server, request));
    expect(body.choices[0]!.finish_reason).toBe('stop');
    expect(body.choices[0]!.message).toEqual({ role: 'assistant', content: expectedText, refusal: null });

    const chunks = await readChunks(await postChat(server, { ...request, stream: true }));
    expect(reassemble(chunks)).toEqual({
      message: { role: 'assistant', content: expectedText, refusal: null },
      finish_reason: 'stop',
    });
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta.content).length).toBeGreaterThan(2);
  });

  it('answers in text when the turn holds tool results followed by more user text', async () => {
    const server = await start();
    const message = await readMessage(
      await postChat(server, {
        tools: [ADD_TOOL],
        messages: [
          { role: 'user', content: 'Add.' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_x1', type: 'function', function: { name: 'add', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'call_x1', content: '5' },
          { role: 'user', content: 'Thanks.' },
        ],
      }),
    );
    expect(message.content).toBe('The tools answered: add → 5');
  });

  it('echoes a short summary of the last user message when there is nothing else to do', async () => {
    const server = await start();
    const body = await readCompletion(
      await postChat(server, {
        model: 'any-model',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: [{ type: 'text', text: 'Hello,\n\n   mock   model!' }] },
        ],
      }),
    );
    expect(body.choices[0]).toMatchObject({
      finish_reason: 'stop',
      message: { content: 'You said: Hello, mock model!' },
    });
  });
});

describe('authentication', () => {
  it('refuses a request without the token, or with a wrong one, with an OpenAI-shaped 401', async () => {
    const server = await start({ token: 'sekrit' });
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: 'sekrit' }]) {
      const response = await postChat(server, TOOL_REQUEST, { headers });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({
        error: {
          message: expect.any(String),
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      });
    }
    const models = await fetch(`${server.url}/models`);
    expect(models.status).toBe(401);
  });

  it('serves a request that carries the right bearer token', async () => {
    const server = await start({ token: 'sekrit' });
    const response = await postChat(server, TOOL_REQUEST, { headers: { authorization: 'Bearer sekrit' } });
    expect(response.status).toBe(200);
    expect(server.requests.at(-1)?.headers['authorization']).toBe('Bearer sekrit');
  });
});

describe('scripted replies', () => {
  it('serves scripted replies in order, then falls back to the default behaviour', async () => {
    const server = await start({
      script: {
        replies: [
          { text: 'First, scripted.', reasoning: 'Thinking it over.' },
          {
            text: 'Let me look.',
            tool_calls: [
              { id: 'call_given', name: 'get_weather', arguments: { city: 'Paris' } },
              { name: 'add', arguments: '{"a": 1, "b": ' },
            ],
          },
          { error: { status: 429, headers: { 'retry-after': '1' } } },
          { text: 'Cut short.', finish_reason: 'length' },
        ],
      },
    });
    const first = await readCompletion(await postChat(server, TOOL_REQUEST));
    expect(first.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: 'First, scripted.',
        refusal: null,
        reasoning_content: 'Thinking it over.',
      },
      logprobs: null,
      finish_reason: 'stop',
    });

    const second = (await readCompletion(await postChat(server, TOOL_REQUEST))).choices[0]!;
    expect(second.finish_reason).toBe('tool_calls');
    expect(second.message.content).toBe('Let me look.');
    expect(second.message.tool_calls).toEqual([
      {
        id: 'call_given',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      },
      { id: 'call_mock000001', type: 'function', function: { name: 'add', arguments: '{"a": 1, "b": ' } },
    ]);

    const third = await postChat(server, TOOL_REQUEST);
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBe('1');
    expect(await third.json()).toEqual({
      error: {
        message: expect.any(String),
        type: 'rate_limit_error',
        param: null,
        code: 'rate_limit_exceeded',
      },
    });

    const fourth = await readChunks(await postChat(server, { ...TOOL_REQUEST, stream: true }));
    expect(reassemble(fourth)).toEqual({
      message: { role: 'assistant', content: 'Cut short.', refusal: null },
      finish_reason: 'length',
    });

    const fifth = await readMessage(await postChat(server, TOOL_REQUEST));
    expect(toolNames(fifth)).toEqual(['add', 'get_weather']);
  });

  it('sends a scripted error body exactly as given, JSON or text', async () => {
    const server = await start({
      script: {
        replies: [
          { error: { status: 503, body: { error: { message: 'Slow Down', code: 503 } } } },
          {
            error: {
              status: 502,
              body: '<html>Bad Gateway</html>',
              headers: { 'content-type': 'text/html' },
            },
          },
        ],
      },
    });
    const first = await postChat(server, TOOL_REQUEST);
    expect(first.status).toBe(503);
    expect(await first.json()).toEqual({ error: { message: 'Slow Down', code: 503 } });
    const second = await postChat(server, TOOL_REQUEST);
    expect(second.status).toBe(502);
    expect(second.headers.get('content-type')).toBe('text/html');
    expect(await second.text()).toBe('<html>Bad Gateway</html>');
  });

  it('puts a scripted stream error inside a 200 stream after the given number of chunks', async () => {
    const error = { message: 'Provider returned error', code: 400 };
    const server = await start({
      script: {
        replies: [
          { stream_error: { after_chunks: 2, error }, text: 'One two three four.' },
          { stream_error: {} },
        ],
      },
    });
    const chunks = await readChunks(await postChat(server, { ...TOOL_REQUEST, stream: true }));
    expect(chunks).toHaveLength(3);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    expect(chunks[1]!.choices[0]!.delta).toEqual({ content: 'One' });
    expect(chunks[2]).toEqual({ error });

    const plain = await postChat(server, TOOL_REQUEST);
    expect(plain.status).toBe(500);
    expect(await plain.json()).toEqual({
      error: { message: expect.any(String), type: 'server_error', param: null, code: null },
    });
  });

  it('waits delay_ms before sending the headers', async () => {
    const server = await start({ script: { replies: [{ text: 'Late.', delay_ms: 150 }] } });
    const started = performance.now();
    const response = await postChat(server, TOOL_REQUEST);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(response.status).toBe(200);
  });

  it('refuses to start with an invalid script, naming the faulty field', async () => {
    await expect(startMockModel({ script: { replies: [{ error: { status: 42 } }] } })).rejects.toThrow(
      'mock script: replies[0].error.status: expected an integer from 200 to 599, got 42',
    );
  });
});

describe('other endpoints and bad requests', () => {
  it('lists the configured model at /v1/models', async () => {
    const server = await start({ model: 'my-model' });
    const response = await fetch(`${server.url}/models`);
    expect(response.status).toBe(200);
    const expected = { id: 'my-model', object: 'model', created: expect.any(Number), owned_by: 'tpx-mock' };
    expect(await response.json()).toEqual({ object: 'list', data: [expected] });
    expect(await (await fetch(`${server.url}/models/my-model`)).json()).toEqual(expected);
    expect((await fetch(`${server.url}/models/other`)).status).toBe(404);
  });

  it('answers chat completions without the /v1 prefix too', async () => {
    const server = await start();
    const root = server.url.replace(/\/v1$/, '');
    const response = await fetch(`${root}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect((await readMessage(response)).content).toBe('You said: hi');
  });

  it('rejects a body that is not JSON with an OpenAI-shaped 400', async () => {
    const server = await start();
    const response = await postChat(server, '{"messages": [');
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: { message: expect.any(String), type: 'invalid_request_error', param: null, code: null },
    });
    expect(server.requests[0]?.body).toBe('{"messages": [');
  });

  it('rejects a request without messages, naming the parameter', async () => {
    const server = await start();
    const response = await postChat(server, { model: 'any-model' });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: {
        message: "Missing required parameter: 'messages'.",
        type: 'invalid_request_error',
        param: 'messages',
        code: 'missing_required_parameter',
      },
    });
  });

  it('does not spend a scripted reply on a rejected request', async () => {
    const server = await start({ script: { replies: [{ text: 'Kept for later.' }] } });
    expect((await postChat(server, 'not json')).status).toBe(400);
    expect((await readMessage(await postChat(server, TOOL_REQUEST))).content).toBe('Kept for later.');
  });

  it('answers an unknown route with an OpenAI-shaped 404', async () => {
    const server = await start();
    const response = await fetch(`${server.url}/embeddings`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: {
        message: 'Invalid URL (POST /v1/embeddings)',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
  });
});

describe('recording and lifecycle', () => {
  it('records every request with its method, path, lower-case headers and parsed body', async () => {
    const server = await start();
    await postChat(server, TOOL_REQUEST, {
      headers: { 'X-Custom-Header': 'yes' },
      path: '/chat/completions?x=1',
    });
    await fetch(`${server.url}/models`);
    expect(server.requests).toHaveLength(2);
    const [chat, models] = server.requests;
    expect(chat).toMatchObject({
      method: 'POST',
      path: '/v1/chat/completions',
      query: '?x=1',
      aborted: false,
    });
    expect(chat?.headers['x-custom-header']).toBe('yes');
    expect(chat?.body).toEqual(TOOL_REQUEST);
    expect(models).toMatchObject({ method: 'GET', path: '/v1/models', body: '', aborted: false });
  });

  it('marks a request aborted when the client disconnects in the middle of a stream', async () => {
    const server = await start({ chunkDelayMs: 100 });
    const controller = new AbortController();
    const response = await postChat(server, { ...TOOL_REQUEST, stream: true }, { signal: controller.signal });
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    controller.abort();
    await expect(reader.read()).rejects.toThrow();
    await expect.poll(() => server.requests[0]?.aborted, { timeout: 2000 }).toBe(true);

    // A request that completes is not marked.
    await (await postChat(server, TOOL_REQUEST)).json();
    expect(server.requests[1]?.aborted).toBe(false);
  });

  it('keeps only the latest maxRecordedRequests requests, letting the oldest go first', async () => {
    const server = await start({ maxRecordedRequests: 2 });
    for (const text of ['first', 'second', 'third', 'fourth']) {
      await (await postChat(server, { messages: [{ role: 'user', content: text }] })).json();
    }
    expect(
      server.requests.map((request) => (request.body as typeof TOOL_REQUEST).messages[0]!.content),
    ).toEqual(['third', 'fourth']);
  });

  it('records nothing with maxRecordedRequests 0, and answers as before', async () => {
    const server = await start({ maxRecordedRequests: 0 });
    const message = await readMessage(await postChat(server, TOOL_REQUEST));
    expect(toolNames(message)).toEqual(['add', 'get_weather']);
    expect(server.requests).toEqual([]);
  });

  it('refuses a maxRecordedRequests that is not a whole number of requests', async () => {
    for (const value of [-1, 1.5, Number.NaN, Number.NEGATIVE_INFINITY]) {
      await expect(startMockModel({ maxRecordedRequests: value })).rejects.toThrow(
        /maxRecordedRequests must be a whole number of requests/,
      );
    }
  });

  it('closes promptly with a stream in flight and leaves nothing listening', async () => {
    const listeningHandles = (): number =>
      process.getActiveResourcesInfo().filter((resource) => resource === 'TCPServerWrap').length;
    const before = listeningHandles();
    const server = await startMockModel({ chunkDelayMs: 10_000 });
    expect(listeningHandles()).toBe(before + 1);
    const response = await postChat(server, { ...TOOL_REQUEST, stream: true });
    const reader = response.body!.getReader();
    await reader.read();

    const started = performance.now();
    await server.close();
    expect(performance.now() - started).toBeLessThan(1000);
    expect(listeningHandles()).toBe(before);
    await expect(reader.read()).rejects.toThrow();
    expect(server.requests[0]?.aborted).toBe(true);
    await expect(fetch(`${server.url}/models`)).rejects.toThrow();
    await server.close(); // a second close is harmless
  });
});
