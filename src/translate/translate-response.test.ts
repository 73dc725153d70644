import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isTransportError, type TransportError } from '../errors.js';
import type { ChatCompletionResponse } from '../protocol/chat-completions.js';
import { validateMessage } from '../protocol/validate-messages.js';
import { decodeToolId } from './tool-id-codec.js';
import { translateResponse, type ResponseContext } from './translate-response.js';

const FIXTURES = new URL('./__fixtures__/upstream-openai-compat/', import.meta.url);
const fixture = (path: string): ChatCompletionResponse =>
  JSON.parse(readFileSync(new URL(path, FIXTURES), 'utf8')) as ChatCompletionResponse;

/** A deterministic context: ids gen1, gen2, …; upstream tool names prefixed `up_` map back without it. */
function context(): ResponseContext {
  let counter = 0;
  return {
    requestModel: 'claude-sonnet-4-5',
    toolNames: { fromUpstream: (name) => name.replace(/^up_/, '') },
    generateId: () => `gen${++counter}`,
  };
}

function response(
  message: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): ChatCompletionResponse {
  return {
    id: 'chatcmpl-1',
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    ...extra,
  };
}

function thrown(action: () => unknown): TransportError {
  try {
    action();
  } catch (error) {
    if (isTransportError(error)) return error;
    throw new Error(`expected a TransportError, got ${String(error)}`);
  }
  throw new Error('expected a TransportError, nothing was thrown');
}

describe('translateResponse', () => {
  it('translates a plain text answer into a whole Messages message', () => {
    expect(translateResponse(response({ content: 'Hello!' }), context())).toEqual({
      id: 'msg_chatcmpl-1',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: 'Hello!' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: 10,
        output_tokens: 5,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });
  });

  it.each([
    ['chatcmpl-1', 'msg_chatcmpl-1'],
    ['msg_sanitized', 'msg_sanitized'],
    ['33be18fc-3842-486c-8c29-dd8e578f7f20', 'msg_33be18fc-3842-486c-8c29-dd8e578f7f20'],
    ['3SE-aKjdCcCEz7IPxpqjCA', 'msg_3SE-aKjdCcCEz7IPxpqjCA'],
    ['gen:1/2', 'msg_gen1'],
    ['', 'msg_gen1'],
    [null, 'msg_gen1'],
    ['x'.repeat(201), 'msg_gen1'],
  ])('derives the message id from upstream id %j as %s', (upstreamId, expected) => {
    expect(translateResponse(response({ content: 'x' }, { id: upstreamId }), context()).id).toBe(expected);
  });

  it('echoes the requested model, not the upstream one', () => {
    expect(translateResponse(response({ content: 'x' }, { model: 'gpt-4o' }), context()).model).toBe(
      'claude-sonnet-4-5',
    );
  });

  it('omits the text block when the content is empty or null', () => {
    expect(translateResponse(response({ content: '' }), context()).content).toEqual([]);
    expect(translateResponse(response({ content: null }), context()).content).toEqual([]);
  });

  it('puts reasoning_content first as a thinking block with an empty signature', () => {
    const message = translateResponse(
      response({ reasoning_content: 'Let me think.', content: 'Done.' }),
      context(),
    );
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Let me think.', signature: '' },
      { type: 'text', text: 'Done.' },
    ]);
  });

  it('reads reasoning, then reasoning_details, when reasoning_content is absent', () => {
    expect(translateResponse(response({ reasoning: 'R', content: 'T' }), context()).content[0]).toEqual({
      type: 'thinking',
      thinking: 'R',
      signature: '',
    });
    const details = response({
      reasoning: null,
      reasoning_details: [{ type: 'reasoning.text', text: 'D1' }, { text: 'D2' }],
    });
    expect(translateResponse(details, context()).content).toEqual([
      { type: 'thinking', thinking: 'D1D2', signature: '' },
    ]);
  });

  it('takes text and thinking parts from an array content (Mistral Magistral, quirk 14)', () => {
    const message = translateResponse(
      response({
        content: [
          {
            type: 'thinking',
            thinking: [
              { type: 'text', text: 'a' },
              { type: 'text', text: 'b' },
            ],
          },
          { type: 'text', text: 'Hello' },
          { type: 'image_url', image_url: { url: 'x' } },
          { type: 'text', text: ' world' },
        ],
      }),
      context(),
    );
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'ab', signature: '' },
      { type: 'text', text: 'Hello world' },
    ]);
  });

  it('turns a refusal into a text block with stop_reason refusal', () => {
    const message = translateResponse(
      response({ content: null, refusal: 'I cannot help with that.' }),
      context(),
    );
    expect(message.content).toEqual([{ type: 'text', text: 'I cannot help with that.' }]);
    expect(message.stop_reason).toBe('refusal');
  });

  it('translates tool calls with codec ids, mapped names and parsed input', () => {
    const message = translateResponse(
      response(
        {
          content: 'Checking.',
          tool_calls: [
            {
              id: 'call_a',
              type: 'function',
              function: { name: 'up_weather', arguments: '{"city":"Paris"}' },
            },
            { id: 'functions.read:0', type: 'function', function: { name: 'read', arguments: '' } },
            { id: 'call_a', type: 'function', function: { name: 'read', arguments: { path: 'a.txt' } } },
            { id: '', type: 'function', function: { name: 'noop' } },
            { function: { name: 'noop', arguments: ' \n' } },
          ],
        },
        { id: null },
      ),
      { ...context() },
    );
    expect(message.content).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'call_a', name: 'weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'tpx_eZnVuY3Rpb25zLnJlYWQ6MA', name: 'read', input: {} },
      { type: 'tool_use', id: 'tpx_d2eY2FsbF9h', name: 'read', input: { path: 'a.txt' } },
      { type: 'tool_use', id: 'tpx_ggen2', name: 'noop', input: {} },
      { type: 'tool_use', id: 'tpx_ggen3', name: 'noop', input: {} },
    ]);
    expect(message.id).toBe('msg_gen1');
    expect(message.stop_reason).toBe('tool_use');
    const ids = message.content.flatMap((block) => (block.type === 'tool_use' ? [block.id as string] : []));
    // The repeated call_a goes back under the id the caller was shown, so each call keeps its own.
    expect(ids.map(decodeToolId)).toEqual([
      'call_a',
      'functions.read:0',
      'tpx_d2eY2FsbF9h',
      'tpx_ggen2',
      'tpx_ggen3',
    ]);
  });

  it('reports max_tokens rather than refusal when the token limit cut a refusal', () => {
    const cut = response({ refusal: 'I cannot' });
    cut.choices[0]!.finish_reason = 'length';
    expect(translateResponse(cut, context()).stop_reason).toBe('max_tokens');
  });

  it('maps stop with tool calls to tool_use, and length to max_tokens', () => {
    const call = { id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } };
    expect(translateResponse(response({ tool_calls: [call] }), context()).stop_reason).toBe('tool_use');
    const cut = response({ content: 'abc' });
    cut.choices[0]!.finish_reason = 'length';
    expect(translateResponse(cut, context()).stop_reason).toBe('max_tokens');
  });

  it('delivers a second parallel call cut at "{" by the token limit as a tool_use with empty input', () => {
    // What llama.cpp answers when `finish_reason: "length"` cuts the second of two forced calls.
    const cut = response({
      content: null,
      tool_calls: [
        { id: 'first', type: 'function', function: { name: 'f', arguments: '{"city":"Paris"}' } },
        { id: 'second', type: 'function', function: { name: 'f', arguments: '{' } },
      ],
    });
    cut.choices[0]!.finish_reason = 'length';
    const message = translateResponse(cut, context());
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.content).toEqual([
      { type: 'tool_use', id: 'first', name: 'f', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'second', name: 'f', input: {} },
    ]);
  });

  it('completes arguments the token limit cut mid-value, keeping what arrived', () => {
    const cut = response({
      tool_calls: [{ id: 'c', function: { name: 'f', arguments: '{"city":"Par' } }],
    });
    cut.choices[0]!.finish_reason = 'length';
    expect(translateResponse(cut, context()).content).toEqual([
      { type: 'tool_use', id: 'c', name: 'f', input: { city: 'Par' } },
    ]);
  });

  it('still refuses cut arguments that are not the beginning of a JSON object', () => {
    const cut = response({ tool_calls: [{ id: 'c', function: { name: 'f', arguments: 'Paris"}' } }] });
    cut.choices[0]!.finish_reason = 'length';
    const error = thrown(() => translateResponse(cut, context()));
    expect(error.code).toBe('MODEL_EPROTO');
    expect(error.message).toMatch(/tool call #0 .* not the beginning of a JSON object/);
  });

  it.each([
    ['malformed JSON', '{"city": "Par', /arguments that are not valid JSON: "\{\\"city\\": \\"Par"/],
    ['a JSON array', '[1,2]', /arguments that are an array, not a JSON object/],
    ['a JSON number', '42', /arguments that are a number, not a JSON object/],
    ['a JSON string', '"Paris"', /arguments that are a string, not a JSON object/],
    ['JSON null', 'null', /arguments that are null, not a JSON object/],
    ['an array value', ['x'], /arguments that are an array, not a JSON object/],
    ['a number value', 7, /arguments that are a number, not a JSON object/],
  ])('refuses arguments that are %s, naming the call', (_name, argumentsValue, pattern) => {
    const error = thrown(() =>
      translateResponse(
        response({
          tool_calls: [
            { id: 'ok', function: { name: 'f', arguments: '{}' } },
            { id: 'call_9', function: { name: 'up_weather', arguments: argumentsValue } },
          ],
        }),
        context(),
      ),
    );
    expect(error.code).toBe('MODEL_EPROTO');
    expect(error.message).toMatch(/tool call #1 \(name "up_weather", id "call_9"\)/);
    expect(error.message).toMatch(pattern);
  });

  it('quotes at most 100 characters of bad arguments', () => {
    const error = thrown(() =>
      translateResponse(
        response({ tool_calls: [{ function: { name: 'f', arguments: `{"a":"${'x'.repeat(300)}` } }] }),
        context(),
      ),
    );
    const quoted = /not valid JSON: (".*")$/.exec(error.message)![1]!;
    expect((JSON.parse(quoted) as string).length).toBe(101);
  });

  it('refuses a tool call without a function name', () => {
    const error = thrown(() =>
      translateResponse(
        response({ tool_calls: [{ id: 'call_1', function: { name: '', arguments: '{}' } }] }),
        context(),
      ),
    );
    expect(error.code).toBe('MODEL_EPROTO');
    expect(error.message).toMatch(/tool call #0 \(no name, id "call_1"\) has no function name/);
  });

  it('treats finish_reason "error" as an upstream error', () => {
    const failed = response({ content: 'partial' });
    failed.choices[0]!.finish_reason = 'error';
    const error = thrown(() => translateResponse(failed, context()));
    expect([error.code, error.body.error.type]).toEqual(['MODEL_EHTTP', 'api_error']);
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['an array', []],
    ['no choices', { id: 'x' }],
    ['empty choices', { choices: [] }],
    ['choices not an array', { choices: { 0: {} } }],
    ['a choice that is not an object', { choices: [7] }],
    ['a choice without a message', { choices: [{ finish_reason: 'stop' }] }],
    ['a numeric content', { choices: [{ message: { content: 5 } }] }],
    ['tool_calls that is not an array', { choices: [{ message: { tool_calls: {} } }] }],
    ['a tool call that is not an object', { choices: [{ message: { tool_calls: ['x'] } }] }],
  ])('throws MODEL_EPROTO, not a TypeError, for %s', (_name, value) => {
    const error = thrown(() => translateResponse(value as ChatCompletionResponse, context()));
    expect(error.code).toBe('MODEL_EPROTO');
  });

  it('never throws anything but a TransportError, and otherwise returns a valid message', () => {
    const toolCall = fc.record(
      {
        id: fc.oneof(fc.string(), fc.constant(null)),
        index: fc.integer(),
        type: fc.constant('function'),
        function: fc.oneof(
          fc.record(
            {
              name: fc.oneof(fc.string(), fc.constant(null)),
              arguments: fc.oneof(fc.json(), fc.jsonValue()),
            },
            { requiredKeys: [] },
          ),
          fc.jsonValue(),
        ),
      },
      { requiredKeys: [] },
    );
    const message = fc.record(
      {
        content: fc.oneof(
          fc.string(),
          fc.constant(null),
          fc.array(fc.jsonValue(), { maxLength: 3 }),
          fc.jsonValue(),
        ),
        reasoning_content: fc.oneof(fc.string(), fc.constant(null)),
        reasoning: fc.jsonValue(),
        refusal: fc.oneof(fc.string(), fc.constant(null)),
        tool_calls: fc.oneof(fc.array(toolCall, { maxLength: 4 }), fc.jsonValue()),
      },
      { requiredKeys: [] },
    );
    const upstream = fc.oneof(
      fc.record(
        {
          id: fc.oneof(fc.string(), fc.jsonValue()),
          choices: fc.oneof(
            fc.array(
              fc.record(
                { message, finish_reason: fc.oneof(fc.string(), fc.constant(null)) },
                { requiredKeys: [] },
              ),
              {
                maxLength: 2,
              },
            ),
            fc.jsonValue(),
          ),
          usage: fc.jsonValue(),
        },
        { requiredKeys: [] },
      ),
      fc.jsonValue(),
    );
    fc.assert(
      fc.property(upstream, (value) => {
        let translated;
        try {
          translated = translateResponse(value as ChatCompletionResponse, context());
        } catch (error) {
          expect(isTransportError(error)).toBe(true);
          return;
        }
        const validation = validateMessage(translated);
        expect(validation).toEqual({ ok: true, value: translated });
        const ids = translated.content.flatMap((block) =>
          block.type === 'tool_use' ? [block.id as string] : [],
        );
        expect(new Set(ids).size).toBe(ids.length);
        for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
      }),
      { numRuns: 2000 },
    );
  });
});

/** Every recorded JSON body, as a path under `upstream-openai-compat/`. */
const recordedBodies = readdirSync(FIXTURES, { recursive: true, encoding: 'utf8' })
  .filter((path) => path.endsWith('.json'))
  .sort();

describe('translateResponse on recorded responses', () => {
  it('finds the recorded bodies', () => {
    expect(recordedBodies.length).toBeGreaterThanOrEqual(8);
  });

  it.each(recordedBodies)('translates %s into a valid message, or refuses an error body', (path) => {
    const body = fixture(path);
    if (path.split('/').at(-1)!.startsWith('error.')) {
      expect(thrown(() => translateResponse(body, context())).message).toMatch(/has no choices/);
    } else {
      expect(validateMessage(translateResponse(body, context())).ok).toBe(true);
    }
  });

  it('translates the Gemini tool call with an empty id (quirk 5) into a valid message', () => {
    const message = translateResponse(
      fixture('gemini-openai-compat/gemini-2.5-pro.tool-call-empty-id.json'),
      context(),
    );
    expect(validateMessage(message).ok).toBe(true);
    expect(message).toEqual({
      id: 'msg_3SE-aKjdCcCEz7IPxpqjCA',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'tool_use', id: 'tpx_ggen1', name: 'get_current_time', input: {} }],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 35,
        output_tokens: 12,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });
  });

  it('translates the Ollama tool call with reasoning and an indexed tool call (quirk 25)', () => {
    const message = translateResponse(fixture('ollama/gpt-oss-20b.cloud.tool-call.json'), context());
    expect(validateMessage(message).ok).toBe(true);
    expect(message.id).toBe('msg_chatcmpl-273');
    expect(message.content.map((block) => block.type)).toEqual(['thinking', 'tool_use']);
    expect(message.content[0]).toMatchObject({ type: 'thinking', signature: '' });
    expect((message.content[0] as { thinking: string }).thinking).toMatch(/^The conversation: user asked/);
    expect(message.content[1]).toEqual({
      type: 'tool_use',
      id: 'call_o2vnpxrw',
      name: 'final_result',
      input: { city: 'Paris', country: 'France' },
    });
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toEqual({
      input_tokens: 206,
      output_tokens: 194,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
  });
});

describe('translateResponse: exact refusals and readers', () => {
  it.each<[string, unknown, string]>([
    ['null', null, 'the upstream response is not a JSON object'],
    ['an array', [], 'the upstream response is not a JSON object'],
    ['no choices', { id: 'x' }, 'the upstream response has no choices'],
    ['empty choices', { choices: [] }, 'the upstream response has no choices'],
    [
      'a choice that is not an object',
      { choices: [7] },
      'the upstream response has no message in choices[0]',
    ],
    [
      'a choice without a message',
      { choices: [{ finish_reason: 'stop' }] },
      'the upstream response has no message in choices[0]',
    ],
    [
      'a numeric content',
      { choices: [{ message: { content: 5 } }] },
      'choices[0].message.content is a number, not a string or an array of parts',
    ],
    [
      'an object content',
      { choices: [{ message: { content: {} } }] },
      'choices[0].message.content is an object, not a string or an array of parts',
    ],
    [
      'tool_calls that is an object',
      { choices: [{ message: { tool_calls: {} } }] },
      'choices[0].message.tool_calls is an object, not an array',
    ],
    [
      'a tool call that is a string',
      { choices: [{ message: { tool_calls: ['x'] } }] },
      'tool call #0 is a string, not an object',
    ],
    [
      'a tool call that is null',
      { choices: [{ message: { tool_calls: [null] } }] },
      'tool call #0 is null, not an object',
    ],
    [
      'a tool call that is an array',
      { choices: [{ message: { tool_calls: [[]] } }] },
      'tool call #0 is an array, not an object',
    ],
  ])('refuses %s with a 502 that is not retried, naming what is wrong', (_name, value, message) => {
    const error = thrown(() => translateResponse(value as ChatCompletionResponse, context()));
    expect([error.code, error.message, error.status, error.retryable, error.provider]).toStrictEqual([
      'MODEL_EPROTO',
      `unintelligible upstream answer: ${message}`,
      502,
      false,
      'tpx',
    ]);
  });

  it('fails finish_reason "error" as a retryable 502 saying the generation failed', () => {
    const failed = response({ content: 'partial' });
    failed.choices[0]!.finish_reason = 'error';
    const error = thrown(() => translateResponse(failed, context()));
    expect([error.code, error.message, error.status, error.retryable, error.provider]).toStrictEqual([
      'MODEL_EHTTP',
      'upstream finished with finish_reason "error": the generation failed and its output is incomplete',
      502,
      true,
      'tpx',
    ]);
  });

  it('keeps an upstream id of exactly 200 safe characters', () => {
    const id = 'a'.repeat(200);
    expect(translateResponse(response({ content: 'x' }, { id }), context()).id).toBe(`msg_${id}`);
  });

  it('reads text and thinking parts in order, skipping empty texts, other part types and non-objects', () => {
    const message = translateResponse(
      response({
        content: [
          'a',
          '',
          { type: 'text', text: '' },
          { type: 'text', text: 5 },
          { type: 'text', text: 'b' },
          { type: 'thinking', thinking: 'T' },
          { type: 'thinking', thinking: ['x', { text: 'y' }, 5, { text: 3 }] },
          { type: 'thinking', thinking: 9 },
          { type: 'image' },
          7,
          null,
        ],
      }),
      context(),
    );
    expect(message.content).toStrictEqual([
      { type: 'thinking', thinking: 'Txy', signature: '' },
      { type: 'text', text: 'ab' },
    ]);
  });

  it('reads reasoning_details texts, else summaries, in order, after an empty reasoning_content and reasoning', () => {
    const message = translateResponse(
      response({
        content: 'a',
        reasoning_content: '',
        reasoning: '',
        reasoning_details: [{ text: 'r1' }, { summary: 's2' }, 5, { text: '', summary: 'sum' }, {}],
      }),
      context(),
    );
    expect(message.content[0]).toStrictEqual({ type: 'thinking', thinking: 'r1s2sum', signature: '' });
    const fromReasoning = translateResponse(
      response({ content: 'a', reasoning_content: '', reasoning: 'R' }),
      context(),
    );
    expect(fromReasoning.content[0]).toStrictEqual({ type: 'thinking', thinking: 'R', signature: '' });
  });

  it('names the call, quotes its arguments and keeps the parser error as the cause for malformed JSON', () => {
    const error = thrown(() =>
      translateResponse(
        response({ tool_calls: [{ function: { name: 'f', arguments: '{"a":}' } }] }),
        context(),
      ),
    );
    expect(error.message).toBe(
      'unintelligible upstream answer: tool call #0 (name "f", no id) has arguments that are not valid JSON: "{\\"a\\":}"',
    );
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it('quotes arguments of another type as JSON, and arguments that cannot be JSON as text', () => {
    const quoted = (argumentsValue: unknown) =>
      thrown(() =>
        translateResponse(
          response({ tool_calls: [{ id: 'c', function: { name: 'f', arguments: argumentsValue } }] }),
          context(),
        ),
      ).message;
    expect(quoted(true)).toBe(
      'unintelligible upstream answer: tool call #0 (name "f", id "c") has arguments that are a boolean, not a JSON object: "true"',
    );
    const circular: unknown[] = [];
    circular.push(circular);
    expect(quoted(circular)).toBe(
      'unintelligible upstream answer: tool call #0 (name "f", id "c") has arguments that are an array, not a JSON object: ""',
    );
  });

  it('refuses arguments nested deeper than the JSON depth limit', () => {
    const deep = `{"a":${'['.repeat(300)}${']'.repeat(300)}}`;
    const error = thrown(() =>
      translateResponse(
        response({ tool_calls: [{ id: 'c', function: { name: 'f', arguments: deep } }] }),
        context(),
      ),
    );
    expect(error.message).toBe(
      'unintelligible upstream answer: tool call #0 (name "f", id "c") has arguments that nest more than 256 levels deep',
    );
  });

  it('after a cut, takes object arguments as they are, blank ones as {}, and quotes 100 characters of unusable ones', () => {
    const cut = (argumentsValue: unknown) => {
      const body = response({
        tool_calls: [{ id: 'c', function: { name: 'f', arguments: argumentsValue } }],
      });
      body.choices[0]!.finish_reason = 'length';
      return body;
    };
    expect(translateResponse(cut({ a: 1 }), context()).content).toStrictEqual([
      { type: 'tool_use', id: 'c', name: 'f', input: { a: 1 } },
    ]);
    expect(translateResponse(cut('  '), context()).content).toStrictEqual([
      { type: 'tool_use', id: 'c', name: 'f', input: {} },
    ]);
    expect(thrown(() => translateResponse(cut('x'.repeat(150)), context())).message).toBe(
      `unintelligible upstream answer: tool call #0 (name "f", id "c") has arguments that are not the beginning of a JSON object: "${'x'.repeat(100)}…"`,
    );
  });
});
