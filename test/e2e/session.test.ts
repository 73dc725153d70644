/**
 * The session ledger (`pending` in the formal model) over a real transport and a scripted
 * OpenAI-compatible upstream on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTransportError, type TransportError } from '../../src/errors.js';
import type { MessageParam, MessagesRequest } from '../../src/protocol/messages.js';
import { createTransport } from '../../src/transport/create-transport.js';
import { createSession } from '../../src/transport/session.js';
import type { ModelTransport } from '../../src/transport/types.js';
import { openAiSse, startScriptedServer, step, type ScriptedServer } from '../helpers/scripted-server.js';

const TOOLS = [{ name: 'lookup', input_schema: { type: 'object' } }];

function completion(message: Record<string, unknown>, finish: string) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'upstream',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
    usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
  };
}

/** A reply calling `lookup` once per provider id. */
function toolCalls(...ids: string[]) {
  return completion(
    {
      content: null,
      tool_calls: ids.map((id) => ({
        id,
        type: 'function',
        function: { name: 'lookup', arguments: '{"q":1}' },
      })),
    },
    'tool_calls',
  );
}

const TEXT = completion({ content: 'done' }, 'stop');

function request(messages: MessageParam[]): MessagesRequest {
  return { model: 'claude-test', max_tokens: 64, tools: TOOLS, messages };
}

async function rejection(promise: Promise<unknown>): Promise<TransportError> {
  try {
    await promise;
  } catch (error) {
    if (isTransportError(error)) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('createSession', () => {
  let upstream: ScriptedServer;
  let transport: ModelTransport;

  beforeAll(async () => {
    upstream = await startScriptedServer();
    transport = createTransport({
      env: { TPX_OAUTH_TOKEN: 'session-token', TPX_BASE_URL: `${upstream.url}/v1` },
      maxRetries: 0,
    });
  });
  afterAll(async () => {
    await transport.close();
    await upstream.close();
  });

  it('sets pending to the tool_use ids of the delivered response, mapped through the codec', async () => {
    const session = createSession(transport);
    upstream.push(step.json(toolCalls('call_1', 'functions.lookup:2')));
    const message = await session.send(request([{ role: 'user', content: 'go' }]));
    const ids = message.content
      .filter((block) => block.type === 'tool_use')
      .map((block) => (block as { id: string }).id);
    expect(ids).toHaveLength(2);
    expect(ids[0]).toBe('call_1');
    expect(ids[1]).toMatch(/^tpx_e[A-Za-z0-9_-]+$/);
    expect(session.pending).toEqual(ids);
    expect(session.lastOutcome).toBe('ok');
    expect(session.turns).toBe(1);
  });

  it('accepts the next request only when its tool_results answer pending exactly, and sends the provider ids back', async () => {
    const session = createSession(transport);
    upstream.push(step.json(toolCalls('call_a', 'call b')), step.json(TEXT));
    const first = await session.send(request([{ role: 'user', content: 'go' }]));
    const ids = [...session.pending];
    const history: MessageParam[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: first.content },
    ];
    const before = upstream.requests.length;

    const missing = await rejection(
      session.send(
        request([
          ...history,
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: ids[0]!, content: 'x' }] },
        ]),
      ),
    );
    expect(missing.code).toBe('MODEL_EPAIRING');
    expect(missing.message).toContain(ids[1]!);
    expect(upstream.requests.length).toBe(before); // refused before anything was sent
    expect(session.pending).toEqual(ids); // the obligations are still owed
    expect(session.turns).toBe(1);

    await session.send(
      request([
        ...history,
        {
          role: 'user',
          content: ids.map((id) => ({ type: 'tool_result' as const, tool_use_id: id, content: 'r' })),
        },
      ]),
    );
    const wire = upstream.requests.at(-1)?.json as { messages: { role: string; tool_call_id?: string }[] };
    expect(wire.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual([
      'call_a',
      'call b',
    ]);
    expect(session.pending).toEqual([]);
    expect(session.lastOutcome).toBe('ok');
    expect(session.turns).toBe(2);
  });

  it('keeps the obligations when the transport refuses a request before sending it', async () => {
    const session = createSession(transport);
    upstream.push(step.json(toolCalls('call_k')), step.json(TEXT));
    const first = await session.send(request([{ role: 'user', content: 'go' }]));
    const answer: MessageParam[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_k', content: 'r' }] },
    ];
    const before = upstream.requests.length;
    // The pairing is right, but a server tool cannot be translated: MODEL_EINVAL, nothing sent.
    const refused = await rejection(
      session.send({
        ...request(answer),
        tools: [...TOOLS, { name: 'web_search', type: 'web_search_20250305' }],
      }),
    );
    expect(refused.code).toBe('MODEL_EINVAL');
    expect(upstream.requests.length).toBe(before);
    expect(session.pending).toEqual(['call_k']);
    expect(session.turns).toBe(1);
    await session.send(request(answer));
    expect(session.pending).toEqual([]);
    expect(session.lastOutcome).toBe('ok');
  });

  it('refuses tool_results when nothing is pending', async () => {
    const session = createSession(transport);
    const error = await rejection(
      session.send(
        request([
          { role: 'user', content: 'go' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'old', name: 'lookup', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'old', content: 'x' }] },
        ]),
      ),
    );
    expect(error.code).toBe('MODEL_EPAIRING');
    expect(error.message).toContain('old');
  });

  it('abort drops the obligations and records an error outcome', async () => {
    const session = createSession(transport);
    upstream.push(step.json(toolCalls('call_z')));
    await session.send(request([{ role: 'user', content: 'go' }]));
    expect(session.pending).toEqual(['call_z']);
    session.abort();
    expect(session.pending).toEqual([]);
    expect(session.lastOutcome).toBe('err');
    expect(session.turns).toBe(2);
    session.abort(); // nothing pending: nothing to abort
    expect(session.turns).toBe(2);
  });

  it('a failed exchange clears pending and records an error outcome', async () => {
    const session = createSession(transport);
    upstream.push(step.json(toolCalls('call_f')));
    const first = await session.send(request([{ role: 'user', content: 'go' }]));
    upstream.push(step.json({ error: { message: 'boom', type: 'server_error' } }, { status: 500 }));
    const error = await rejection(
      session.send(
        request([
          { role: 'user', content: 'go' },
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_f', content: 'r' }] },
        ]),
      ),
    );
    expect(error.code).toBe('MODEL_EHTTP');
    expect(session.pending).toEqual([]);
    expect(session.lastOutcome).toBe('err');
    expect(session.turns).toBe(2);
  });

  it('stream sets pending from the streamed tool_use blocks', async () => {
    const session = createSession(transport);
    upstream.push(
      step.sse(
        openAiSse([
          {
            choices: [
              {
                index: 0,
                delta: {
                  role: 'assistant',
                  tool_calls: [
                    {
                      index: 0,
                      id: 'call_s',
                      type: 'function',
                      function: { name: 'lookup', arguments: '{}' },
                    },
                  ],
                },
                finish_reason: null,
              },
            ],
          },
          { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
        ]),
      ),
    );
    const types: string[] = [];
    for await (const event of session.stream(request([{ role: 'user', content: 'go' }])))
      types.push(event.type);
    expect(types.at(-1)).toBe('message_stop');
    expect(session.pending).toEqual(['call_s']);
    expect(session.lastOutcome).toBe('ok');
  });

  it('a stream the caller stops reading ends the turn with an error outcome', async () => {
    const session = createSession(transport);
    upstream.push(
      step.sse(
        openAiSse([
          { choices: [{ index: 0, delta: { role: 'assistant', content: 'a' }, finish_reason: null }] },
          { choices: [{ index: 0, delta: { content: 'b' }, finish_reason: null }] },
          { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
        ]),
        { frameDelayMs: 20 },
      ),
    );
    for await (const event of session.stream(request([{ role: 'user', content: 'go' }]))) {
      if (event.type === 'content_block_delta') break;
    }
    expect(session.lastOutcome).toBe('err');
    expect(session.turns).toBe(1);
    await upstream.settled(upstream.requests.length - 1);
  });

  it('runs one exchange at a time', async () => {
    const session = createSession(transport);
    upstream.push(step.json(TEXT), step.json(TEXT));
    const first = session.send(request([{ role: 'user', content: 'one' }]));
    const second = await rejection(session.send(request([{ role: 'user', content: 'two' }])));
    expect(second.code).toBe('MODEL_EINVAL');
    expect(second.message).toContain('one exchange at a time');
    await first;
    expect(session.turns).toBe(1);
    // the second step is consumed by a fresh exchange, so the script stays in step
    await session.send(request([{ role: 'user', content: 'three' }]));
    expect(session.turns).toBe(2);
  });
});
