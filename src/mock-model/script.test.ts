import { describe, expect, it } from 'vitest';

import { classifyReply, parseMockScript } from './script.js';

describe('parseMockScript', () => {
  it('accepts every reply kind and returns an equal copy', () => {
    const script = {
      replies: [
        { text: 'Hi.', reasoning: 'Greeting.', finish_reason: 'length', delay_ms: 5, chunk_delay_ms: 1 },
        {
          tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
          text: 'Looking.',
        },
        { tool_calls: [{ name: 'broken', arguments: '{"a":' }] },
        { error: { status: 429, headers: { 'Retry-After': '1' }, body: { anything: [1, 2] } } },
        { error: { status: 500 } },
        {
          stream_error: { after_chunks: 0, error: { message: 'boom' } },
          tool_calls: [{ name: 'x', arguments: {} }],
        },
        { stream_error: {} },
      ],
    };
    const parsed = parseMockScript(script);
    expect(parsed).not.toBe(script);
    expect(parsed.replies.map((reply) => classifyReply(reply).kind)).toEqual([
      'text',
      'tool_calls',
      'tool_calls',
      'error',
      'error',
      'stream_error',
      'stream_error',
    ]);
    // Header names are folded to lower case; everything else is kept as written.
    expect(parsed.replies[3]).toEqual({
      error: { status: 429, headers: { 'retry-after': '1' }, body: { anything: [1, 2] } },
    });
    expect(parsed.replies.filter((_, index) => index !== 3)).toEqual(
      script.replies.filter((_, index) => index !== 3),
    );
  });

  it('accepts an empty script', () => {
    expect(parseMockScript({ replies: [] })).toEqual({ replies: [] });
  });

  it.each([
    [[], 'mock script: (root): expected an object, got an array'],
    [{}, 'mock script: (root): missing key "replies"'],
    [{ replies: {} }, 'mock script: replies: expected an array, got an object'],
    [{ replies: [], extra: 1 }, 'mock script: (root): unknown key "extra" (expected "replies")'],
    [{ replies: ['hi'] }, 'mock script: replies[0]: expected an object, got "hi"'],
    [{ replies: [{}] }, 'mock script: replies[0]: empty reply'],
    [{ replies: [{ txt: 'hi' }] }, 'mock script: replies[0]: unknown key "txt"'],
    [{ replies: [{ text: 'a', colour: 'red' }] }, 'mock script: replies[0]: unknown key "colour"'],
    [
      { replies: [{ text: 'a', error: { status: 500 } }] },
      'mock script: replies[0]: "text" cannot be combined with "error"',
    ],
    [{ replies: [{ text: 5 }] }, 'mock script: replies[0].text: expected a string, got 5'],
    [
      { replies: [{ text: 'a', finish_reason: '' }] },
      'mock script: replies[0].finish_reason: expected a non-empty',
    ],
    [
      { replies: [{ text: 'a', delay_ms: -1 }] },
      'mock script: replies[0].delay_ms: expected a number of milliseconds',
    ],
    [
      { replies: [{ tool_calls: [] }] },
      'mock script: replies[0].tool_calls: expected at least one tool call',
    ],
    [
      { replies: [{ text: 'ok' }, { tool_calls: [{ name: 'f' }] }] },
      'mock script: replies[1].tool_calls[0]: missing key "arguments"',
    ],
    [
      { replies: [{ tool_calls: [{ name: 'f', arguments: [1] }] }] },
      'mock script: replies[0].tool_calls[0].arguments: expected an object or a string, got an array',
    ],
    [
      { replies: [{ tool_calls: [{ name: 'f', arguments: {}, extra: true }] }] },
      'mock script: replies[0].tool_calls[0]: unknown key "extra"',
    ],
    [
      { replies: [{ error: { status: '429' } }] },
      'mock script: replies[0].error.status: expected an integer from 200 to 599, got "429"',
    ],
    [
      { replies: [{ error: { status: 700 } }] },
      'mock script: replies[0].error.status: expected an integer from 200 to 599, got 700',
    ],
    [
      { replies: [{ error: { status: 429, headers: { 'retry-after': 1 } } }] },
      'mock script: replies[0].error.headers.retry-after: expected a string, got 1',
    ],
    [
      { replies: [{ error: { status: 429, headers: { 'x-a': 'b\r\nc: d' } } }] },
      'mock script: replies[0].error.headers.x-a: a header value cannot contain a line break',
    ],
    [
      { replies: [{ stream_error: { after_chunks: 1.5 } }] },
      'mock script: replies[0].stream_error.after_chunks: expected a whole number of chunks',
    ],
    [
      { replies: [{ stream_error: { error: 'boom' } }] },
      'mock script: replies[0].stream_error.error: expected an object, got "boom"',
    ],
    [
      { replies: [{ stream_error: {}, finish_reason: 'stop' }] },
      'mock script: replies[0]: "finish_reason" cannot be combined with "stream_error"',
    ],
  ])('rejects %j naming the faulty path', (script, message) => {
    expect(() => parseMockScript(script)).toThrow(message);
  });
});
