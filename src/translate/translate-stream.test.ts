import { readFileSync } from 'node:fs';
import { createParser } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import { isTransportError, type TransportError } from '../errors.js';
import type { ChatCompletionChunk, ChatCompletionResponse } from '../protocol/chat-completions.js';
import type { Message, MessageStreamEvent } from '../protocol/messages.js';
import { accumulateStream } from '../../test/helpers/accumulate-stream.js';
import { createStreamGrammar } from '../protocol/stream-grammar.js';
import { validateMessage, validateStreamEvent } from '../protocol/validate-messages.js';
import { encodeToolIds } from './tool-id-codec.js';
import { translateResponse } from './translate-response.js';
import { StreamTranslator, type StreamContext } from './stream-translator.js';
import { chatStreamSteps, translateStream, type StreamSteps } from './translate-stream.js';

const FIXTURES = new URL('./__fixtures__/upstream-openai-compat/', import.meta.url);

type Item = ChatCompletionChunk | 'done';

/** A recorded stream as translator input: `.sse` through eventsource-parser, `.chunks.jsonl` plus `[DONE]`. */
function recorded(path: string): Item[] {
  const text = readFileSync(new URL(path, FIXTURES), 'utf8');
  const items: Item[] = [];
  if (path.endsWith('.sse')) {
    const parser = createParser({
      onEvent: (event) =>
        items.push(event.data === '[DONE]' ? 'done' : (JSON.parse(event.data) as ChatCompletionChunk)),
    });
    parser.feed(text);
    return items;
  }
  for (const line of text.split('\n'))
    if (line.trim() !== '') items.push(JSON.parse(line) as ChatCompletionChunk);
  items.push('done');
  return items;
}

function context(overrides: Partial<StreamContext> = {}): StreamContext {
  let counter = 0;
  return {
    requestModel: 'claude-sonnet-4-5',
    toolNames: { fromUpstream: (name) => name.replace(/^up_/, '') },
    generateId: () => `gen${++counter}`,
    ...overrides,
  };
}

interface Run {
  events: MessageStreamEvent[];
  error: TransportError | undefined;
}

/** Drives a translator over items; `[DONE]` ends the input, as does the end of the list (EOF). */
function run(items: readonly Item[], overrides: Partial<StreamContext> = {}): Run {
  const translator = new StreamTranslator(context(overrides));
  const events: MessageStreamEvent[] = [...translator.start()];
  try {
    let sawDone = false;
    for (const item of items) {
      if (item === 'done') {
        sawDone = true;
        break;
      }
      events.push(...translator.push(item));
    }
    events.push(...translator.finish(sawDone));
    return { events, error: undefined };
  } catch (error) {
    if (!isTransportError(error)) throw error;
    return { events, error };
  }
}

/** Every event is valid alone and the sequence follows the grammar; returns the end-of-stream verdict. */
function checkGrammar(events: readonly MessageStreamEvent[]): string | undefined {
  const grammar = createStreamGrammar();
  for (const event of events) {
    expect(validateStreamEvent(event).ok).toBe(true);
    expect(grammar.accept(event)).toBeUndefined();
  }
  return grammar.end();
}

function complete(items: readonly Item[], overrides: Partial<StreamContext> = {}): Message {
  const { events, error } = run(items, overrides);
  if (error !== undefined) throw error;
  expect(checkGrammar(events)).toBeUndefined();
  expect(events.at(-1)).toEqual({ type: 'message_stop' });
  return accumulateStream(events);
}

/** A chunk with one choice-0 delta. */
function delta(
  value: Record<string, unknown>,
  finishReason: string | null = null,
  extra: Record<string, unknown> = {},
): ChatCompletionChunk {
  return { id: 'chatcmpl-1', choices: [{ index: 0, delta: value, finish_reason: finishReason }], ...extra };
}

const toolCall = (value: Record<string, unknown>): ChatCompletionChunk => delta({ tool_calls: [value] });
const fn = (name: string | null | undefined, args?: unknown): Record<string, unknown> => ({
  ...(name === undefined ? {} : { name }),
  ...(args === undefined ? {} : { arguments: args }),
});
const finish = (reason: string, extra: Record<string, unknown> = {}): ChatCompletionChunk =>
  delta({}, reason, extra);

/** Each item as a batch of its own (one upstream body chunk per item). */
async function* oneItemPerBatch<T>(items: AsyncIterable<T>): AsyncGenerator<T[]> {
  for await (const item of items) yield [item];
}

/** The events `translateStream` gives for `items` with the Chat Completions steps, one at a time. */
async function* translateItems(items: AsyncIterable<Item>): AsyncGenerator<MessageStreamEvent> {
  for await (const batch of translateStream(oneItemPerBatch(items), chatStreamSteps(context()))) yield* batch;
}

const ZERO_USAGE = {
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
};

describe('translateStream on recorded streams', () => {
  const cases: [string, Omit<Message, 'id' | 'type' | 'role' | 'model'>][] = [
    [
      'openai/gpt-4o-mini.tool-call.stream.sse',
      {
        content: [
          {
            type: 'tool_use',
            id: 'call_ZR5UUuTt3pf61kjwAJIYdVMj',
            name: 'get_capital',
            input: { country: 'UK' },
          },
        ],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: {
          input_tokens: 53,
          output_tokens: 15,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
    ],
    [
      'openai/gpt-4o-mini.after-tool-result.stream.sse',
      {
        content: [{ type: 'text', text: 'The capital of the UK is London.' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: {
          input_tokens: 78,
          output_tokens: 9,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
    ],
    [
      'openai/gpt-4o.text-then-tool.chunks.jsonl',
      {
        content: [
          { type: 'text', text: 'PRE_TOOL' },
          { type: 'tool_use', id: 'call_NZa7xqfefoaMI2YYHowVXVlU', name: 'weather', input: {} },
        ],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: {
          input_tokens: 58,
          output_tokens: 12,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
    ],
    [
      'openai/gpt-4o.text-after-tool.chunks.jsonl',
      {
        content: [{ type: 'text', text: 'POST_TOOL' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: {
          input_tokens: 86,
          output_tokens: 2,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
    ],
    [
      'azure/gpt-5-nano.model-router.chunks.jsonl',
      {
        content: [{ type: 'text', text: 'Capital of Denmark.' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: {
          input_tokens: 15,
          output_tokens: 78,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
    ],
    [
      'groq/llama-3.3-70b.tool-call.chunks.jsonl',
      {
        content: [{ type: 'tool_use', id: 'tk85n1k4m', name: 'weather', input: {} }],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: {
          input_tokens: 210,
          output_tokens: 15,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
    ],
    [
      'mistral/mistral-small.tool-call.chunks.jsonl',
      {
        content: [
          { type: 'tool_use', id: 'gSIMJiOkT', name: 'weather', input: { location: 'San Francisco' } },
        ],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: {
          input_tokens: 124,
          output_tokens: 22,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
    ],
    [
      'mistral/zai-glm.incremental-tool-call.chunks.jsonl',
      {
        content: [
          {
            type: 'tool_use',
            id: 'chatcmpl-tool-9f149c74c42f265b',
            name: 'webSearchTool',
            input: { query: 'current Berlin weather' },
          },
        ],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: {
          input_tokens: 43,
          output_tokens: 14,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 128,
        },
      },
    ],
    [
      'alibaba/qwen3-max.tool-call.chunks.jsonl',
      {
        content: [
          {
            type: 'tool_use',
            id: 'call_eee11723464a4b9eb8cee71d',
            name: 'weather',
            input: { location: 'San Francisco' },
          },
        ],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: {
          input_tokens: 295,
          output_tokens: 22,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
    ],
    [
      'anthropic-openai-compat/claude-haiku-4-5.tool-call.sse',
      {
        content: [
          { type: 'text', text: 'Reading it.' },
          { type: 'tool_use', id: 'toolu_sanitized', name: 'read_file', input: { path: 'a.txt' } },
        ],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: ZERO_USAGE,
      },
    ],
  ];

  it.each(cases)('translates %s into a grammar-valid stream of the recorded answer', (path, expected) => {
    const message = complete(recorded(path));
    expect(validateMessage(message).ok).toBe(true);
    expect(message).toEqual({
      id: 'msg_gen1',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      ...expected,
    });
  });

  it.each([
    [
      'deepseek/deepseek-reasoner.thinking.stream.sse',
      'Hmm, the user just said "Hello".',
      'end_turn',
      { input_tokens: 6, output_tokens: 212, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    ],
    [
      'deepseek/deepseek-reasoner.tool-call.chunks.jsonl',
      'The user is asking for the weather in',
      'tool_use',
      { input_tokens: 19, output_tokens: 83, cache_creation_input_tokens: 0, cache_read_input_tokens: 320 },
    ],
    [
      'groq/gpt-oss-120b.tool-call.stream.sse',
      'We need to call the function',
      'tool_use',
      { input_tokens: 304, output_tokens: 49, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    ],
    [
      'mistral/mistral-small.thinking-content-array.chunks.jsonl',
      'Okay, the user is asking for the product',
      'end_turn',
      { input_tokens: 28, output_tokens: 139, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    ],
    [
      'openrouter/claude-sonnet-4.5.reasoning.stream.sse',
      'This is a simple arithmetic question. 2+2 equals 4.',
      'end_turn',
      { input_tokens: 43, output_tokens: 36, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    ],
    [
      'xai/grok-3-mini.tool-call.chunks.jsonl',
      'First, the user is',
      'tool_use',
      { input_tokens: 1, output_tokens: 26, cache_creation_input_tokens: 0, cache_read_input_tokens: 290 },
    ],
  ])(
    'translates the reasoning stream %s into a leading thinking block',
    (path, thinkingStart, stopReason, usage) => {
      const message = complete(recorded(path));
      expect(validateMessage(message).ok).toBe(true);
      const [first, ...rest] = message.content;
      expect(first).toMatchObject({ type: 'thinking', signature: '' });
      expect((first as { thinking: string }).thinking.startsWith(thinkingStart)).toBe(true);
      expect(rest.map((block) => block.type)).toEqual([stopReason === 'tool_use' ? 'tool_use' : 'text']);
      expect(message.stop_reason).toBe(stopReason);
      expect(message.usage).toEqual(usage);
    },
  );

  it('splits Magistral array content into its thinking and text (quirk 14)', () => {
    const message = complete(recorded('mistral/mistral-small.thinking-content-array.chunks.jsonl'));
    expect(message.content[1]).toEqual({ type: 'text', text: '391' });
    expect((message.content[0] as { thinking: string }).thinking).toMatch(/17 \* 23 = 391\.$/);
  });

  it('emits the canonical OpenAI tool-call stream event by event', () => {
    const { events } = run(recorded('openai/gpt-4o-mini.tool-call.stream.sse'));
    expect(events).toEqual([
      {
        type: 'message_start',
        message: {
          id: 'msg_gen1',
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 0, output_tokens: 0 },
        },
      },
      {
        type: 'content_block_start',
        index: 0,
        content_block: {
          type: 'tool_use',
          id: 'call_ZR5UUuTt3pf61kjwAJIYdVMj',
          name: 'get_capital',
          input: {},
        },
      },
      ...['{"', 'country', '":"', 'UK', '"}'].map((partial_json) => ({
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json },
      })),
      { type: 'content_block_stop', index: 0 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: {
          output_tokens: 15,
          input_tokens: 53,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
      { type: 'message_stop' },
    ]);
  });

  it('ends the Groq tool-use-failed stream (event: error, no [DONE], quirk 18) with a grammar-valid prefix and the error', () => {
    const { events, error } = run(recorded('groq/gpt-oss-120b.tool-use-failed.stream.sse'));
    expect(checkGrammar(events)).toMatch(/ended without message_stop/);
    expect(events.map((event) => event.type)).not.toContain('message_stop');
    expect(error?.code).toBe('MODEL_EHTTP');
    expect(error?.body.error.type).toBe('invalid_request_error');
    expect(error?.message).toMatch(/^upstream stream error 400 tool_use_failed: Tool call validation failed/);
    const grammar = createStreamGrammar();
    for (const event of [...events, { type: 'error', error: error!.body.error }])
      expect(grammar.accept(event)).toBeUndefined();
    expect(grammar.end()).toBeUndefined();
  });

  it('ends the OpenRouter stream with an error inside a chunk (quirk 17) with a grammar-valid prefix and the error', () => {
    const { events, error } = run(recorded('openrouter/minimax-m2.stream-error.sse'));
    expect(checkGrammar(events)).toMatch(/ended without message_stop/);
    expect(events.map((event) => event.type)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
    ]);
    expect(error?.message).toBe('upstream stream error 400: Token limit reached');
    expect(error?.body.error.type).toBe('invalid_request_error');
  });

  it('yields the same events through the async translateStream as through the state machine', async () => {
    for (const path of [
      'openai/gpt-4o.text-then-tool.chunks.jsonl',
      'xai/grok-3-mini.tool-call.chunks.jsonl',
    ]) {
      const items = recorded(path);
      async function* source(): AsyncGenerator<Item> {
        yield* items;
      }
      const events: MessageStreamEvent[] = [];
      for await (const event of translateItems(source())) events.push(event);
      expect(events).toEqual(run(items).events);
    }
  });

  it('stops reading at [DONE] and throws from the iteration for an error stream', async () => {
    let readAfterDone = false;
    async function* source(): AsyncGenerator<Item> {
      yield delta({ content: 'hi' });
      yield 'done';
      readAfterDone = true;
      yield delta({ content: 'late' });
    }
    const events: MessageStreamEvent[] = [];
    for await (const event of translateItems(source())) events.push(event);
    expect(readAfterDone).toBe(false);
    expect(accumulateStream(events).content).toEqual([{ type: 'text', text: 'hi' }]);

    const items = recorded('openrouter/minimax-m2.stream-error.sse');
    async function* failing(): AsyncGenerator<Item> {
      yield* items;
    }
    const seen: MessageStreamEvent[] = [];
    await expect(async () => {
      for await (const event of translateItems(failing())) seen.push(event);
    }).rejects.toMatchObject({ code: 'MODEL_EHTTP' });
    expect(seen).toHaveLength(4);
  });

  it('throws "stream ended before the model finished" when the input ends with neither [DONE] nor a finish reason', async () => {
    async function* source(): AsyncGenerator<Item> {
      yield delta({ content: 'Hel' });
    }
    const seen: MessageStreamEvent[] = [];
    await expect(async () => {
      for await (const event of translateItems(source())) seen.push(event);
    }).rejects.toMatchObject({
      code: 'MODEL_EPROTO',
      message: expect.stringMatching(/stream ended before the model finished/),
    });
    expect(seen.map((event) => event.type)).toStrictEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
    ]);
  });
});

describe('StreamTranslator: stream ends', () => {
  it('throws "stream ended before the model finished" at EOF with neither finish_reason nor [DONE]', () => {
    const { events, error } = run([delta({ content: 'Hel' })]);
    expect(error?.code).toBe('MODEL_EPROTO');
    expect(error?.message).toMatch(/stream ended before the model finished/);
    expect(checkGrammar(events)).toMatch(/ended without message_stop/);
  });

  it('ends normally at EOF after a finish_reason without [DONE] (recordings without the sentinel)', () => {
    expect(complete([delta({ content: 'Hi' }), finish('stop')]).stop_reason).toBe('end_turn');
  });

  it('maps [DONE] without any finish_reason to end_turn, or tool_use after tool calls', () => {
    expect(complete([delta({ content: 'Hi' }), 'done']).stop_reason).toBe('end_turn');
    expect(complete([toolCall({ index: 0, id: 'c', function: fn('f', '{}') }), 'done']).stop_reason).toBe(
      'tool_use',
    );
  });

  it('translates an empty stream ([DONE] only) into an empty message', () => {
    expect(complete(['done'])).toMatchObject({ content: [], stop_reason: 'end_turn', usage: ZERO_USAGE });
  });

  it('treats finish_reason "error" as an upstream error', () => {
    const { error } = run([delta({ content: 'x' }), finish('error'), 'done']);
    expect([error?.code, error?.body.error.type]).toEqual(['MODEL_EHTTP', 'api_error']);
  });

  it('maps content_filter and refusal deltas to stop_reason refusal', () => {
    expect(complete([delta({ content: 'I' }), finish('content_filter'), 'done']).stop_reason).toBe('refusal');
    const refused = complete([
      delta({ refusal: 'I cannot' }),
      delta({ refusal: ' help.' }),
      finish('stop'),
      'done',
    ]);
    expect(refused.content).toEqual([{ type: 'text', text: 'I cannot help.' }]);
    expect(refused.stop_reason).toBe('refusal');
  });

  it('reports max_tokens rather than refusal when the token limit cut a refusal', () => {
    expect(complete([delta({ refusal: 'I cannot' }), finish('length'), 'done']).stop_reason).toBe(
      'max_tokens',
    );
  });

  it('refuses chunks after finish and a second finish', () => {
    const translator = new StreamTranslator(context());
    translator.start();
    translator.finish(true);
    expect(() => translator.push(delta({ content: 'x' }))).toThrow(/after the end of the stream/);
    expect(() => translator.finish(true)).toThrow(/already finished/);
  });

  it('emits message_start on the first push when start() was not called', () => {
    const translator = new StreamTranslator(context());
    expect(translator.push(delta({ content: 'x' })).map((event) => event.type)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
    ]);
    expect(translator.start()).toEqual([]);
  });
});

describe('StreamTranslator: usage', () => {
  it('sends the input estimate in message_start and the final usage in message_delta', () => {
    const { events } = run(
      [
        delta({ content: 'x' }),
        finish('stop'),
        {
          choices: [],
          usage: { prompt_tokens: 40, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 30 } },
        },
        'done',
      ],
      { inputTokensEstimate: 37 },
    );
    expect(events[0]).toMatchObject({ message: { usage: { input_tokens: 37, output_tokens: 0 } } });
    expect(events.at(-2)).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: {
        output_tokens: 2,
        input_tokens: 10,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 30,
      },
    });
  });

  it('keeps the estimate as input_tokens when the upstream sends no usage', () => {
    const { events } = run([delta({ content: 'x' }), finish('stop'), 'done'], { inputTokensEstimate: 12 });
    expect(events.at(-2)).toMatchObject({ usage: { output_tokens: 0, input_tokens: 12 } });
  });

  it('takes the last usage seen: finish chunk, empty-choices chunk, or a chunk with choices (quirks 7–9)', () => {
    const usage = (completion: number) => ({ prompt_tokens: 1, completion_tokens: completion });
    const message = complete([
      delta({ content: 'a' }, null, { usage: null }),
      delta({}, 'stop', { usage: usage(1) }),
      { choices: [], usage: usage(2) },
      delta({ role: 'assistant', content: '' }, null, { usage: usage(3) }),
      'done',
    ]);
    expect(message.usage.output_tokens).toBe(3);
  });
});

describe('StreamTranslator: text and thinking', () => {
  it('emits reasoning and text live, one block each, thinking first', () => {
    const { events } = run([
      delta({ role: 'assistant', content: null, reasoning_content: '' }),
      delta({ reasoning_content: 'Let ' }),
      delta({ reasoning_content: 'me think.' }),
      delta({ content: 'Hi', reasoning_content: null }),
      delta({ role: 'assistant', content: ' there' }),
      finish('stop'),
      'done',
    ]);
    expect(events.slice(1, -2)).toEqual([
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let ' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'me think.' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hi' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: ' there' } },
      { type: 'content_block_stop', index: 1 },
    ]);
  });

  it('reads reasoning from reasoning, then reasoning_details, one source per delta', () => {
    const message = complete([
      delta({ reasoning: 'A', reasoning_details: [{ type: 'reasoning.text', text: 'A' }] }),
      delta({ reasoning: null, reasoning_details: [{ type: 'reasoning.text', text: 'B' }] }),
      finish('stop'),
    ]);
    expect(message.content).toEqual([{ type: 'thinking', thinking: 'AB', signature: '' }]);
  });

  it('opens a new block each time the kind changes', () => {
    const message = complete([
      delta({ reasoning_content: 'r1' }),
      delta({ content: 't1' }),
      delta({ reasoning_content: 'r2' }),
      finish('stop'),
    ]);
    expect(message.content.map((block) => block.type)).toEqual(['thinking', 'text', 'thinking']);
  });

  it('ignores choices other than choice 0 and chunks with only prompt_filter_results (quirk 19)', () => {
    const message = complete([
      { id: '', model: '', choices: [], prompt_filter_results: [{ prompt_index: 0 }] },
      { choices: [{ index: 1, delta: { content: 'other choice' } }] },
      {
        choices: [
          { index: 1, delta: { content: 'B' } },
          { index: 0, delta: { content: 'A' } },
        ],
      },
      finish('stop'),
    ]);
    expect(message.content).toEqual([{ type: 'text', text: 'A' }]);
  });
});

describe('StreamTranslator: tool calls', () => {
  it('streams the first call live and buffers interleaved parallel calls, flushing them whole in index order', () => {
    const { events } = run([
      toolCall({ index: 0, id: 'call_a', type: 'function', function: fn('up_read', '') }),
      toolCall({ index: 0, function: fn(undefined, '{"path":') }),
      toolCall({ index: 1, id: 'call_b', type: 'function', function: fn('write', '{"pa') }),
      toolCall({ index: 0, function: fn(undefined, '"a.txt"}') }),
      toolCall({ index: 1, function: fn(undefined, 'th":"b.txt"}') }),
      finish('tool_calls'),
      'done',
    ]);
    expect(events.slice(1, -2)).toEqual([
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'call_a', name: 'read', input: {} },
      },
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: '{"path":' },
      },
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: '"a.txt"}' },
      },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'call_b', name: 'write', input: {} },
      },
      {
        type: 'content_block_delta',
        index: 1,
        delta: { type: 'input_json_delta', partial_json: '{"path":"b.txt"}' },
      },
      { type: 'content_block_stop', index: 1 },
    ]);
  });

  it('flushes buffered calls by index even when they started out of order', () => {
    const message = complete([
      toolCall({ index: 2, id: 'c2', function: fn('f', '{"n":2}') }),
      toolCall({ index: 1, id: 'c1', function: fn('f', '{"n":1}') }),
      toolCall({ index: 0, id: 'c0', function: fn('f', '{"n":0}') }),
      finish('tool_calls'),
    ]);
    expect(message.content.map((block) => (block as { id: string }).id)).toEqual(['c2', 'c0', 'c1']);
  });

  it('starts a new call for each index-less fragment with a name or a new id, and continues by id or the last call (quirk 2)', () => {
    const message = complete([
      delta({ tool_calls: [{ id: 'a', function: fn('f', '{"x":') }] }),
      delta({ tool_calls: [{ function: fn(undefined, '1}') }] }),
      delta({ tool_calls: [{ id: 'b', function: fn('g', '{"z":') }] }),
      delta({ tool_calls: [{ id: 'c', function: fn('h', '{"y":2}') }] }),
      delta({ tool_calls: [{ id: 'b', function: fn(undefined, '3}') }] }),
      finish('tool_calls'),
    ]);
    expect(message.content).toEqual([
      { type: 'tool_use', id: 'a', name: 'f', input: { x: 1 } },
      { type: 'tool_use', id: 'b', name: 'g', input: { z: 3 } },
      { type: 'tool_use', id: 'c', name: 'h', input: { y: 2 } },
    ]);
  });

  it('treats two index-less whole calls in one chunk as two calls (Mistral, quirk 1)', () => {
    const message = complete([
      delta(
        {
          tool_calls: [
            { id: 'a', function: fn('f', '{"n":1}') },
            { id: 'b', function: fn('f', '{"n":2}') },
          ],
        },
        'tool_calls',
      ),
    ]);
    expect(message.content).toEqual([
      { type: 'tool_use', id: 'a', name: 'f', input: { n: 1 } },
      { type: 'tool_use', id: 'b', name: 'f', input: { n: 2 } },
    ]);
  });

  it('accepts tool-call indexes that start at 1 (quirk 4)', () => {
    const message = complete([
      delta({ content: 'Reading.' }),
      toolCall({ index: 1, id: 'c1', function: fn('read', '{"p":1}') }),
      finish('tool_calls'),
    ]);
    expect(message.content).toEqual([
      { type: 'text', text: 'Reading.' },
      { type: 'tool_use', id: 'c1', name: 'read', input: { p: 1 } },
    ]);
  });

  it('holds fragments until the name is known, then opens the block with them', () => {
    const { events } = run([
      toolCall({ index: 0, id: 'c', function: fn(undefined, '{"a"') }),
      toolCall({ index: 0, function: fn('f') }),
      toolCall({ index: 0, function: fn(undefined, ':1}') }),
      finish('tool_calls'),
    ]);
    expect(events.slice(1, -2)).toEqual([
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'c', name: 'f', input: {} },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"a"' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: ':1}' } },
      { type: 'content_block_stop', index: 0 },
    ]);
  });

  it('never overwrites a known id or name with an empty one (quirk 3)', () => {
    const message = complete([
      toolCall({ index: 0, id: 'call_1', type: 'function', function: fn('f', '') }),
      toolCall({ index: 0, id: '', type: 'function', function: fn('', '{"q":') }),
      toolCall({ index: 0, id: null, function: fn(null, '1}') }),
      toolCall({ index: 0, id: '', type: 'function', function: fn(undefined, '') }),
      finish('tool_calls'),
    ]);
    expect(message.content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'f', input: { q: 1 } }]);
  });

  it('stringifies arguments sent as an object once', () => {
    const { events } = run([
      toolCall({ index: 0, id: 'c', function: fn('f', { a: [1, { b: 'x' }] }) }),
      finish('tool_calls'),
    ]);
    expect(events.filter((event) => event.type === 'content_block_delta')).toEqual([
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: '{"a":[1,{"b":"x"}]}' },
      },
    ]);
  });

  it('sends no input_json_delta for a call without arguments, or with whitespace only', () => {
    for (const args of [undefined, '', ' \n ']) {
      const { events } = run([
        toolCall({ index: 0, id: 'c', function: fn('f', args) }),
        toolCall({ index: 0, function: fn(undefined, args) }),
        finish('tool_calls'),
      ]);
      expect(events.filter((event) => event.type === 'content_block_delta')).toEqual([]);
      expect(accumulateStream(events).content).toEqual([{ type: 'tool_use', id: 'c', name: 'f', input: {} }]);
    }
  });

  it('sends leading whitespace fragments together with the first real content', () => {
    const { events } = run([
      toolCall({ index: 0, id: 'c', function: fn('f', ' ') }),
      toolCall({ index: 0, function: fn(undefined, '\n') }),
      toolCall({ index: 0, function: fn(undefined, '{}') }),
      finish('tool_calls'),
    ]);
    expect(events.filter((event) => event.type === 'content_block_delta')).toEqual([
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: ' \n{}' } },
    ]);
  });

  it('closes the tool block when text follows, and may stream a later call live', () => {
    const message = complete([
      toolCall({ index: 0, id: 'a', function: fn('f', '{}') }),
      delta({ content: 'Now the second.' }),
      toolCall({ index: 1, id: 'b', function: fn('g', '{"k":') }),
      toolCall({ index: 1, function: fn(undefined, 'true}') }),
      finish('tool_calls'),
    ]);
    expect(message.content).toEqual([
      { type: 'tool_use', id: 'a', name: 'f', input: {} },
      { type: 'text', text: 'Now the second.' },
      { type: 'tool_use', id: 'b', name: 'g', input: { k: true } },
    ]);
  });

  it('refuses arguments for a call whose block was already closed', () => {
    const { error } = run([
      toolCall({ index: 0, id: 'a', function: fn('f', '{"x":') }),
      delta({ content: 'interruption' }),
      toolCall({ index: 0, function: fn(undefined, '1}') }),
    ]);
    expect(error?.code).toBe('MODEL_EPROTO');
    expect(error?.message).toMatch(
      /tool call #0 \(name "f", id "a"\) received more arguments after its block was closed/,
    );
  });

  it.each([
    ['malformed JSON', ['{"city": "Par'], /arguments that are not valid JSON: "\{\\"city\\": \\"Par"/],
    ['a JSON array', ['[1,', '2]'], /arguments that are an array, not a JSON object/],
    ['an array value', [[1]], /arguments that are an array, not a JSON object/],
  ])('refuses tool arguments that are %s, naming the call', (_name, fragments, pattern) => {
    const { events, error } = run([
      toolCall({ index: 0, id: 'ok', function: fn('f', '{}') }),
      toolCall({ index: 1, id: 'call_9', function: fn('up_weather') }),
      ...fragments.map((fragment) => toolCall({ index: 1, function: fn(undefined, fragment) })),
      finish('tool_calls'),
      'done',
    ]);
    expect(error?.code).toBe('MODEL_EPROTO');
    expect(error?.message).toMatch(/tool call #1 \(name "up_weather", id "call_9"\)/);
    expect(error?.message).toMatch(pattern);
    expect(checkGrammar(events)).toMatch(/ended without message_stop/);
  });

  it('completes cut-off arguments with one closing delta when the token limit ended the stream', () => {
    const { events, error } = run([
      toolCall({ index: 0, id: 'c', function: fn('f', '{"text": "abc') }),
      finish('length'),
      'done',
    ]);
    expect(error).toBeUndefined();
    expect(checkGrammar(events)).toBeUndefined();
    expect(events.filter((event) => event.type === 'content_block_delta')).toEqual([
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: '{"text": "abc' },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '"}' } },
    ]);
    expect(events.at(-2)).toMatchObject({ delta: { stop_reason: 'max_tokens' } });
    expect(accumulateStream(events).content).toEqual([
      { type: 'tool_use', id: 'c', name: 'f', input: { text: 'abc' } },
    ]);
  });

  it('delivers a second parallel call cut at "{" as a tool_use with empty input, as the response does', () => {
    // What llama.cpp streams when `finish_reason: "length"` cuts the second of two forced calls.
    const { events, error } = run([
      toolCall({ index: 0, id: 'first', function: fn('f', '{"city":"Paris"}') }),
      toolCall({ index: 1, id: 'second', function: fn('f', '{') }),
      finish('length'),
      'done',
    ]);
    expect(error).toBeUndefined();
    const message = accumulateStream(events);
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.content).toEqual([
      { type: 'tool_use', id: 'first', name: 'f', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'second', name: 'f', input: {} },
    ]);
  });

  it('gives the message translateResponse gives for llama.cpp’s recorded stream of a call cut at "{"', () => {
    // Recorded from llama.cpp b11669: the same request, once as JSON, once streamed.
    const streamed = complete(recorded('llamacpp/tiny-tools.parallel-call-cut-by-length.stream.sse'));
    const json = JSON.parse(
      readFileSync(new URL('llamacpp/tiny-tools.parallel-call-cut-by-length.json', FIXTURES), 'utf8'),
    ) as ChatCompletionResponse;
    const sent = translateResponse(json, context());
    expect(streamed.stop_reason).toBe('max_tokens');
    const shape = (message: Message) =>
      message.content.map((block) => ({
        ...block,
        id: (block as { id?: string }).id === undefined ? undefined : '<id>',
      }));
    expect(shape(streamed)).toEqual(shape(sent));
    expect(streamed.content.at(-1)).toMatchObject({ type: 'tool_use', name: 'get_weather', input: {} });
  });

  it('refuses a cut call whose arguments are not even the beginning of a JSON object', () => {
    const { error } = run([toolCall({ index: 0, id: 'c', function: fn('f', '[1,') }), finish('length')]);
    expect(error?.code).toBe('MODEL_EPROTO');
    expect(error?.message).toMatch(/not the beginning of a JSON object/);
  });

  it('refuses a call that never received a name, and drops one that carried nothing', () => {
    const { error } = run([
      toolCall({ index: 0, id: 'c', function: fn(undefined, '{}') }),
      finish('tool_calls'),
    ]);
    expect(error?.message).toMatch(/tool call #0 \(no name, id "c"\) never received a function name/);
    const message = complete([delta({ content: 'x' }), toolCall({ index: 3 }), finish('stop')]);
    expect(message.content).toEqual([{ type: 'text', text: 'x' }]);
    expect(message.stop_reason).toBe('end_turn');
  });

  it('maps finish_reason stop after tool calls to tool_use (quirk 6)', () => {
    expect(
      complete([toolCall({ index: 0, id: 'c', function: fn('f', '{}') }), finish('stop')]).stop_reason,
    ).toBe('tool_use');
  });

  it('assigns ids as encodeToolIds does for the same calls: repeats numbered, missing ids generated', () => {
    const providerIds = ['dup', 'dup', '', 'functions.read:0', 'dup', 'tpx_x'];
    const message = complete([
      ...providerIds.map((id, index) => toolCall({ index, id, function: fn('f', '{}') })),
      finish('tool_calls'),
    ]);
    let counter = 1; // the message id took gen1
    const expected = encodeToolIds(providerIds, () => `gen${++counter}`);
    expect(message.content.map((block) => (block as { id: string }).id)).toEqual(expected);
    expect(expected).toEqual([
      'dup',
      'tpx_d2eZHVw',
      'tpx_ggen2',
      'tpx_eZnVuY3Rpb25zLnJlYWQ6MA',
      'tpx_d3eZHVw',
      'tpx_edHB4X3g',
    ]);
  });

  it('keeps the first id when a later fragment of an open block brings another', () => {
    const message = complete([
      toolCall({ index: 0, function: fn('f', '{') }),
      toolCall({ index: 0, id: 'late', function: fn(undefined, '}') }),
      finish('tool_calls'),
    ]);
    expect(message.content).toEqual([{ type: 'tool_use', id: 'tpx_ggen2', name: 'f', input: {} }]);
  });

  it.each<[string, unknown]>([
    ['a null chunk', null],
    ['choices that is an object', { choices: {} }],
    ['a delta that is a string', { choices: [{ index: 0, delta: 'x' }] }],
    ['content that is a number', { choices: [{ index: 0, delta: { content: 5 } }] }],
    ['tool_calls that is an object', { choices: [{ index: 0, delta: { tool_calls: {} } }] }],
    ['a tool call that is a string', { choices: [{ index: 0, delta: { tool_calls: ['x'] } }] }],
  ])('throws MODEL_EPROTO, not a TypeError, for %s', (_name, chunk) => {
    const { error } = run([chunk as ChatCompletionChunk]);
    expect(error?.code).toBe('MODEL_EPROTO');
  });
});

describe('StreamTranslator: null fields real servers send', () => {
  it('reads a chunk whose error is null as an ordinary chunk', () => {
    expect(complete([delta({ content: 'ok' }, null, { error: null }), finish('stop')]).content).toStrictEqual(
      [{ type: 'text', text: 'ok' }],
    );
  });

  it('takes the usage of a chunk whose choices are null, or missing', () => {
    const usage = { prompt_tokens: 7, completion_tokens: 3 };
    for (const usageChunk of [{ choices: null, usage }, { usage }]) {
      const { events, error } = run([delta({ content: 'x' }), finish('stop'), usageChunk, 'done']);
      expect(error).toBeUndefined();
      expect(events.at(-2)).toStrictEqual({
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: {
          output_tokens: 3,
          input_tokens: 7,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      });
    }
  });

  it('reads a choice whose index is null or missing as choice 0', () => {
    const message = complete([
      { choices: [{ index: null, delta: { content: 'A' } }] } as unknown as ChatCompletionChunk,
      { choices: [{ delta: { content: 'B' } }] },
      finish('stop'),
    ]);
    expect(message.content).toStrictEqual([{ type: 'text', text: 'AB' }]);
  });

  it('keeps the finish reason of a choice whose delta is null or missing', () => {
    for (const choice of [
      { index: 0, delta: null, finish_reason: 'length' },
      { index: 0, finish_reason: 'length' },
    ]) {
      const message = complete([delta({ content: 'cut' }), { choices: [choice] }]);
      expect([message.content, message.stop_reason]).toStrictEqual([
        [{ type: 'text', text: 'cut' }],
        'max_tokens',
      ]);
    }
  });

  it('ignores tool_calls: null and function.arguments: null', () => {
    const { events, error } = run([
      delta({ content: 'Hi', tool_calls: null }),
      toolCall({ index: 0, id: 'call_1', function: { name: 'up_f', arguments: null } }),
      toolCall({ index: 0, function: { arguments: null } }),
      finish('tool_calls'),
    ]);
    expect(error).toBeUndefined();
    expect(events.slice(1, -2)).toStrictEqual([
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'call_1', name: 'f', input: {} },
      },
      { type: 'content_block_stop', index: 1 },
    ]);
  });
});

describe('StreamTranslator: tool-call indexes', () => {
  it.each([
    ['negative', -1],
    ['fractional', 0.5],
    ['a string', '0'],
  ])('places fragments with a %s index as if they had none: a name starts a new call', (_name, index) => {
    const message = complete([
      toolCall({ index, id: 'a', function: fn('f', '{"x":1}') }),
      toolCall({ index, id: 'b', function: fn('g', '{"y":') }),
      toolCall({ index, function: fn(undefined, '2}') }),
      finish('tool_calls'),
    ]);
    expect(message.content).toStrictEqual([
      { type: 'tool_use', id: 'a', name: 'f', input: { x: 1 } },
      { type: 'tool_use', id: 'b', name: 'g', input: { y: 2 } },
    ]);
  });

  it('flushes index-less calls after the indexed ones, in the order they started', () => {
    const message = complete([
      toolCall({ index: 3, id: 'c3', function: fn('f', '{"n":3}') }),
      toolCall({ index: 1, id: 'c1', function: fn('f', '{"n":1}') }),
      delta({ tool_calls: [{ id: 'free', function: fn('g', '{"n":4}') }] }),
      finish('tool_calls'),
    ]);
    expect(message.content).toStrictEqual([
      { type: 'tool_use', id: 'c3', name: 'f', input: { n: 3 } },
      { type: 'tool_use', id: 'c1', name: 'f', input: { n: 1 } },
      { type: 'tool_use', id: 'free', name: 'g', input: { n: 4 } },
    ]);
  });
});

describe('StreamTranslator: which call a tool-call fragment belongs to', () => {
  const toolUses = (events: readonly MessageStreamEvent[]) =>
    events.flatMap((event) =>
      event.type === 'content_block_start' && event.content_block.type === 'tool_use'
        ? [{ id: event.content_block.id, name: event.content_block.name }]
        : [],
    );

  it('keeps the first id and the first name of a call still waiting for its block', () => {
    const message = complete([
      toolCall({ index: 0, id: 'a0', function: fn('f', '{"n":') }),
      toolCall({ index: 1, id: 'b1', function: fn(undefined, '{') }),
      toolCall({ index: 1, id: 'b2', function: fn('g', '}') }),
      toolCall({ index: 1, function: fn('h', '') }),
      toolCall({ index: 0, function: fn(undefined, '0}') }),
      finish('tool_calls'),
    ]);
    expect(message.content).toStrictEqual([
      { type: 'tool_use', id: 'a0', name: 'f', input: { n: 0 } },
      { type: 'tool_use', id: 'b1', name: 'g', input: {} },
    ]);
  });

  it('continues the first call with an id when a later index-less call repeats that id', () => {
    const message = complete([
      delta({ tool_calls: [{ id: 'x', function: fn('f', '{"a":') }] }),
      delta({ tool_calls: [{ id: 'x', function: fn('g', '{}') }] }),
      delta({ tool_calls: [{ id: 'x', function: fn(undefined, '1}') }] }),
      finish('tool_calls'),
    ]);
    expect(message.content.map((block) => (block as { input: unknown }).input)).toStrictEqual([{ a: 1 }, {}]);
  });

  it('starts a new call for an index-less fragment with a name but no id, and for one with a new id but no name', () => {
    const named = complete([
      delta({ tool_calls: [{ id: 'a', function: fn('f', '{}') }] }),
      delta({ tool_calls: [{ function: fn('g', '{}') }] }),
      finish('tool_calls'),
    ]);
    expect(named.content).toStrictEqual([
      { type: 'tool_use', id: 'a', name: 'f', input: {} },
      { type: 'tool_use', id: encodeToolIds([undefined], () => 'gen2')[0], name: 'g', input: {} },
    ]);
    const { error } = run([
      delta({ tool_calls: [{ id: 'a', function: fn('f', '') }] }),
      delta({ tool_calls: [{ id: 'b', function: fn(undefined, '{"x":1}') }] }),
      finish('tool_calls'),
    ]);
    expect(error?.message).toBe(
      'unintelligible upstream answer: tool call #1 (no name, id "b") never received a function name',
    );
  });

  it('starts a call for a first index-less fragment that carries only arguments', () => {
    const { error } = run([delta({ tool_calls: [{ function: fn(undefined, '{}') }] }), finish('tool_calls')]);
    expect(error?.message).toBe(
      'unintelligible upstream answer: tool call #0 (no name, no id) never received a function name',
    );
  });

  it('streams a call live after text closed the first call’s block, one delta per fragment', () => {
    const { events } = run([
      toolCall({ index: 0, id: 'a', function: fn('f', '{}') }),
      delta({ content: 'Next.' }),
      toolCall({ index: 1, id: 'b', function: fn('g', '{"k":') }),
      toolCall({ index: 1, function: fn(undefined, 'true}') }),
      finish('tool_calls'),
    ]);
    expect(toolUses(events)).toStrictEqual([
      { id: 'a', name: 'f' },
      { id: 'b', name: 'g' },
    ]);
    expect(
      events.flatMap((event) =>
        event.type === 'content_block_delta' && event.delta.type === 'input_json_delta' && event.index === 2
          ? [event.delta.partial_json]
          : [],
      ),
    ).toStrictEqual(['{"k":', 'true}']);
  });
});

describe('translateStream in batches', () => {
  const overloaded: ChatCompletionChunk = { error: { message: 'overloaded', code: 529 } };

  async function* batchesOf<T>(...batches: Iterable<T>[]): AsyncGenerator<Iterable<T>> {
    yield* batches;
  }

  async function collect<T>(
    batches: AsyncIterable<Iterable<T>>,
    steps: StreamSteps<T>,
  ): Promise<{ batches: MessageStreamEvent[][]; error: unknown }> {
    const delivered: MessageStreamEvent[][] = [];
    try {
      for await (const batch of translateStream(batches, steps)) delivered.push(batch);
      return { batches: delivered, error: undefined };
    } catch (error) {
      return { batches: delivered, error };
    }
  }

  const types = (batches: MessageStreamEvent[][]) => batches.map((batch) => batch.map((event) => event.type));

  it('yields one batch per input batch, message_start joining the first', async () => {
    const { batches, error } = await collect(
      batchesOf<Item>([delta({ content: 'Hel' }), delta({ content: 'lo' })], [finish('stop'), 'done']),
      chatStreamSteps(context()),
    );
    expect(error).toBeUndefined();
    expect(types(batches)).toStrictEqual([
      ['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta'],
      ['content_block_stop', 'message_delta', 'message_stop'],
    ]);
  });

  it('delivers nothing when the first item is an error, so the attempt can still be retried', async () => {
    const { batches, error } = await collect(batchesOf<Item>([overloaded]), chatStreamSteps(context()));
    expect(batches).toStrictEqual([]);
    expect(error).toMatchObject({ code: 'MODEL_EHTTP' });
  });

  it('delivers what a batch produced before a failure in it, then throws', async () => {
    const { batches, error } = await collect(
      batchesOf<Item>([delta({ content: 'Hi' }), overloaded, delta({ content: 'never' })]),
      chatStreamSteps(context()),
    );
    expect(types(batches)).toStrictEqual([['message_start', 'content_block_start', 'content_block_delta']]);
    expect(error).toMatchObject({ code: 'MODEL_EHTTP' });
  });

  it('fails a lazy batch where reading it fails, after the events of the items before', async () => {
    const unreadable = new Error('not JSON');
    function* lazy(): Generator<Item> {
      yield delta({ content: 'Hi' });
      throw unreadable;
    }
    const { batches, error } = await collect(batchesOf<Item>(lazy()), chatStreamSteps(context()));
    expect(types(batches)).toStrictEqual([['message_start', 'content_block_start', 'content_block_delta']]);
    expect(error).toBe(unreadable);
  });

  it('reads nothing after the steps are finished, and ends the input there', async () => {
    let readAfterDone = false;
    async function* source(): AsyncGenerator<Item[]> {
      yield [delta({ content: 'hi' }, 'stop'), 'done', delta({ content: 'late' })];
      readAfterDone = true;
      yield [delta({ content: 'later' })];
    }
    const { batches, error } = await collect(source(), chatStreamSteps(context()));
    expect(error).toBeUndefined();
    expect(readAfterDone).toBe(false);
    expect(accumulateStream(batches.flat()).content).toStrictEqual([{ type: 'text', text: 'hi' }]);
  });

  it('keeps the start held across items that say nothing yet, and gives end() its own batch', async () => {
    const ping = { type: 'ping' } as const;
    const steps: StreamSteps<'quiet' | 'loud'> = {
      start: () => [ping],
      push: (item) => (item === 'quiet' ? undefined : [ping, ping]),
      isFinished: false,
      end: () => [ping],
    };
    // Nothing said: the start goes out only with the closing events, in the one batch they make.
    const quiet = await collect(batchesOf<'quiet' | 'loud'>(['quiet', 'quiet'], ['quiet']), steps);
    expect(quiet.error).toBeUndefined();
    expect(quiet.batches.map((batch) => batch.length)).toStrictEqual([2]);
    const loud = await collect(batchesOf<'quiet' | 'loud'>(['quiet'], ['loud']), steps);
    expect(loud.batches.map((batch) => batch.length)).toStrictEqual([3, 1]);
  });

  it('finishes an input that ends without [DONE] as such a stream, delivering nothing more when it was cut', async () => {
    const { batches, error } = await collect(
      batchesOf<Item>([delta({ content: 'Hel' })]),
      chatStreamSteps(context()),
    );
    expect(types(batches)).toStrictEqual([['message_start', 'content_block_start', 'content_block_delta']]);
    expect(error).toMatchObject({
      code: 'MODEL_EPROTO',
      message: expect.stringMatching(/stream ended before the model finished/),
    });
  });
});
