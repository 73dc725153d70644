import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { validateChatCompletionChunk, validateChatCompletionResponse } from './validate-chat-completions.js';

/** The recorded upstream wire data kept beside the translator (`src/translate/__fixtures__`, index included). */
const FIXTURES = new URL('../translate/__fixtures__/', import.meta.url);

interface FixtureEntry {
  file: string;
  side: string;
  format: string;
  http_status: number;
}

function readFixture(path: string): string {
  return readFileSync(new URL(path, FIXTURES), 'utf8');
}

/** What OpenAI-compatible servers sent, as listed in the fixture index. */
const upstream = (JSON.parse(readFixture('index.json')) as { fixtures: FixtureEntry[] }).fixtures.filter(
  (entry) => entry.side === 'upstream-openai-compat',
);

const successBodies = upstream.filter(
  (entry) => entry.format.startsWith('json') && entry.http_status === 200,
);
const errorBodies = upstream.filter((entry) => entry.format.startsWith('json') && entry.http_status !== 200);
const streams = upstream.filter((entry) => entry.format === 'sse' || entry.format === 'chunks-jsonl');

/**
 * The parsed chunks of a recorded stream: every `data:` line but `[DONE]` for raw SSE (comments, `event:`
 * lines and blank lines skipped), every line for `.chunks.jsonl`.
 */
function chunksOf(entry: FixtureEntry): unknown[] {
  const body = readFixture(entry.file);
  const payloads =
    entry.format === 'sse'
      ? body
          .split(/\r\n|\r|\n/)
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice('data:'.length).trim())
          .filter((data) => data !== '[DONE]')
      : body.split('\n').filter((line) => line.trim() !== '');
  return payloads.map((payload) => JSON.parse(payload) as unknown);
}

function rejection(result: { ok: true } | { ok: false; message: string }): string {
  if (result.ok) throw new Error('expected the value to be rejected, but it was accepted');
  return result.message;
}

/** A minimal valid response to break one field of at a time. */
function baseResponse(): Record<string, unknown> {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
  };
}

describe('validateChatCompletionResponse', () => {
  it('finds the recorded success bodies', () => {
    expect(successBodies.length).toBeGreaterThanOrEqual(2);
  });

  it.each(successBodies.map((entry) => entry.file))('accepts the recorded response %s', (file) => {
    const body = JSON.parse(readFixture(file)) as unknown;
    const result = validateChatCompletionResponse(body);
    expect(result).toEqual({ ok: true, value: body });
    expect(result.ok && result.value).toBe(body);
  });

  it.each(errorBodies.map((entry) => entry.file))(
    'does not take the error body %s for a response',
    (file) => {
      expect(rejection(validateChatCompletionResponse(JSON.parse(readFixture(file))))).toBe(
        'choices: is required',
      );
    },
  );

  it('refuses a value that is not an object', () => {
    for (const value of [null, undefined, 'ok', 42, [baseResponse()]]) {
      expect(validateChatCompletionResponse(value).ok).toBe(false);
    }
  });

  it('refuses a response without choices, or with none', () => {
    const response = baseResponse();
    delete response['choices'];
    expect(rejection(validateChatCompletionResponse(response))).toBe('choices: is required');
    expect(rejection(validateChatCompletionResponse({ ...baseResponse(), choices: [] }))).toMatch(
      /^choices: /,
    );
  });

  it('names a choice without a message', () => {
    const response = { ...baseResponse(), choices: [{ index: 0, finish_reason: 'stop' }] };
    expect(rejection(validateChatCompletionResponse(response))).toBe('choices[0].message: is required');
  });

  it('names tool calls that are not an array', () => {
    const response = {
      ...baseResponse(),
      choices: [{ message: { content: null, tool_calls: 'get_weather' } }],
    };
    expect(rejection(validateChatCompletionResponse(response))).toBe(
      'choices[0].message.tool_calls: must be array or null',
    );
  });

  it('accepts the looseness real servers need: nulls, missing ids and indexes, object arguments', () => {
    const response = {
      id: null,
      model: null,
      choices: [
        {
          message: {
            content: null,
            reasoning_content: 'thinking',
            tool_calls: [
              { function: { name: 'get_weather', arguments: { city: 'Paris' } } },
              { id: '', index: 1, type: 'function', function: { name: 'f', arguments: '{}' } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: null,
    };
    expect(validateChatCompletionResponse(response)).toMatchObject({ ok: true });
  });
});

describe('validateChatCompletionChunk', () => {
  it('finds the recorded streams', () => {
    expect(streams.length).toBeGreaterThanOrEqual(10);
  });

  it.each(streams.map((entry) => [entry.file, entry] as const))(
    'accepts every chunk of %s',
    (_file, entry) => {
      const chunks = chunksOf(entry);
      expect(chunks.length).toBeGreaterThan(0);
      for (const chunk of chunks)
        expect(validateChatCompletionChunk(chunk)).toEqual({ ok: true, value: chunk });
    },
  );

  it('refuses a value that is not an object', () => {
    for (const value of [null, undefined, '[DONE]', 42, true, []]) {
      expect(validateChatCompletionChunk(value).ok).toBe(false);
    }
  });

  it('names choices that are not an array', () => {
    expect(rejection(validateChatCompletionChunk({ choices: { delta: { content: 'a' } } }))).toBe(
      'choices: must be array or null',
    );
  });

  it('names a delta of the wrong shape', () => {
    expect(rejection(validateChatCompletionChunk({ choices: [{ delta: { content: 5 } }] }))).toBe(
      'choices[0].delta.content: must be string or array or null',
    );
    expect(
      rejection(validateChatCompletionChunk({ choices: [{ delta: { tool_calls: [{ index: 'a' }] } }] })),
    ).toBe('choices[0].delta.tool_calls[0].index: must be integer or null');
  });

  it('accepts a usage-only chunk and an error-only chunk (errors inside an HTTP 200 stream)', () => {
    expect(validateChatCompletionChunk({ choices: [], usage: { prompt_tokens: 5 } })).toMatchObject({
      ok: true,
    });
    expect(
      validateChatCompletionChunk({
        error: { message: 'Tool call validation failed', code: 'tool_use_failed' },
      }),
    ).toMatchObject({ ok: true });
  });
});
