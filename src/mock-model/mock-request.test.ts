/**
 * The mock model's one request reader, over both endpoints' bodies: the same problems, in OpenAI's
 * words, wherever each body keeps the conversation, the tools and the tool choice.
 */
import { describe, expect, it } from 'vitest';
import { CHAT_REQUEST_SHAPE } from './chat-request-shape.js';
import { readMockRequest, type WireRequestShape } from './mock-request.js';
import { RESPONSES_REQUEST_SHAPE } from './responses-request-shape.js';

/** A body of each endpoint holding one user message `text`, with `fields` added. */
const SHAPES: [string, WireRequestShape, (fields: Record<string, unknown>) => Record<string, unknown>][] = [
  [
    'chat',
    CHAT_REQUEST_SHAPE,
    (fields) => ({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...fields }),
  ],
  ['responses', RESPONSES_REQUEST_SHAPE, (fields) => ({ model: 'm', input: 'hi', ...fields })],
];

describe.each(SHAPES)('readMockRequest on the %s endpoint', (_name, shape, body) => {
  it('refuses a body that is not an object, and one without its conversation', () => {
    expect(readMockRequest([], shape)).toEqual({
      ok: false,
      problem: {
        message: 'Invalid type for the request body: expected an object, but got an array instead.',
        param: null,
        code: 'invalid_type',
      },
    });
    const field = shape.conversationField;
    expect(readMockRequest({ model: 'm' }, shape)).toEqual({
      ok: false,
      problem: {
        message: `Missing required parameter: '${field}'.`,
        param: field,
        code: 'missing_required_parameter',
      },
    });
  });

  it('refuses tools that are not a list, and a choice of a function not offered', () => {
    expect(readMockRequest(body({ tools: 'all' }), shape)).toMatchObject({
      ok: false,
      problem: { param: 'tools', code: 'invalid_type' },
    });
    const choice =
      shape === CHAT_REQUEST_SHAPE
        ? { type: 'function', function: { name: 'f' } }
        : { type: 'function', name: 'f' };
    expect(readMockRequest(body({ tool_choice: choice }), shape)).toEqual({
      ok: false,
      problem: {
        message: "Invalid value for 'tool_choice': function 'f' is not among the offered tools.",
        param: 'tool_choice',
        code: 'invalid_value',
      },
    });
    expect(readMockRequest(body({ tool_choice: 'sometimes' }), shape)).toMatchObject({
      ok: false,
      problem: { param: 'tool_choice', code: 'invalid_value' },
    });
  });

  it('reads the conversation, streaming and parallel calls', () => {
    const read = readMockRequest(body({ stream: true, parallel_tool_calls: false }), shape);
    expect(read).toMatchObject({
      ok: true,
      request: {
        messages: [{ role: 'user', content: 'hi' }],
        tools: [],
        toolChoice: { mode: 'auto' },
        parallelToolCalls: false,
        stream: true,
      },
    });
  });
});

describe('readMockRequest: where each endpoint keeps its tools', () => {
  it('reads a Chat Completions function tool and an allowed-tools choice', () => {
    const read = readMockRequest(
      {
        messages: [{ role: 'user', content: 'hi' }],
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
        tool_choice: { type: 'allowed_tools', allowed_tools: { tools: [{ function: { name: 'f' } }] } },
      },
      CHAT_REQUEST_SHAPE,
    );
    expect(read).toMatchObject({
      ok: true,
      request: {
        tools: [{ name: 'f', parameters: { type: 'object' } }],
        toolChoice: { mode: 'allowed', names: ['f'] },
      },
    });
  });

  it('reads a Responses function tool and a named choice, and names a tool without a name by its path', () => {
    const read = readMockRequest(
      { input: 'hi', tools: [{ type: 'function', name: 'f' }], tool_choice: { type: 'function', name: 'f' } },
      RESPONSES_REQUEST_SHAPE,
    );
    expect(read).toMatchObject({ ok: true, request: { toolChoice: { mode: 'named', name: 'f' } } });
    expect(
      readMockRequest({ input: 'hi', tools: [{ type: 'function' }] }, RESPONSES_REQUEST_SHAPE),
    ).toMatchObject({ ok: false, problem: { param: 'tools[0].name', code: 'missing_required_parameter' } });
    expect(
      readMockRequest({ messages: [{ role: 'user' }], tools: [{ type: 'function' }] }, CHAT_REQUEST_SHAPE),
    ).toMatchObject({ ok: false, problem: { param: 'tools[0].function.name' } });
  });
});
