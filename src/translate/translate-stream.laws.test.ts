/**
 * Property-based laws of stream translation:
 * (a) any chunk sequence gives a grammar-valid event stream ending in message_stop, or a TransportError;
 * (b) streaming and non-streaming translations of the same answer give the same message, through our
 *     accumulator and through the official SDK's `MessageStream`;
 * (c) tool ids, names and argument JSON survive streaming exactly.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type {
  ChatCompletionChunk,
  ChatCompletionResponse,
  ChatCompletionUsage,
} from '../protocol/chat-completions.js';
import type { Message } from '../protocol/messages.js';
import { accumulateStream } from '../../test/helpers/accumulate-stream.js';
import {
  assertStreamAgreesWithWhole,
  cutAtRandom,
  expectLawfulStream,
  toolInputs,
  upstreamToolNames,
  grammarVerdict,
  runTranslator,
  sdkFinalMessage,
  type TranslatorRun,
} from '../../test/helpers/stream-laws.js';
import { decodeToolId, encodeToolIds } from './tool-id-codec.js';
import { translateResponse, type ResponseContext } from './translate-response.js';
import { StreamTranslator } from './stream-translator.js';
import { ExactNumber } from '../protocol/exact-json.js';

type Item = ChatCompletionChunk | 'done';

function context(): ResponseContext {
  let counter = 0;
  return {
    requestModel: 'claude-sonnet-4-5',
    toolNames: { fromUpstream: (name) => (name.startsWith('up_') ? name.slice(3) : name) },
    generateId: () => `gen${++counter}`,
  };
}

/** Runs the state machine; any exception other than a TransportError escapes and fails the property. */
function run(items: readonly Item[]): TranslatorRun {
  const translator = new StreamTranslator(context());
  return runTranslator(translator.start(), (emit) => {
    let sawDone = false;
    for (const item of items) {
      if (item === 'done') {
        sawDone = true;
        break;
      }
      emit(translator.push(item));
    }
    emit(translator.finish(sawDone));
  });
}

// ---------------------------------------------------------------------------------------------------
// (a) Adversarial chunk sequences

const idArbitrary = fc.constantFrom(
  undefined,
  null,
  '',
  'call_1',
  'call_2',
  'dup',
  'functions.read:0',
  'tpx_zz',
);
const nameArbitrary = fc.constantFrom(undefined, null, '', 'f', 'up_g', 'h');
const argumentsArbitrary = fc.oneof(
  fc.constantFrom(undefined, null, '', ' ', '{', '}', '{"a":', '1}', '"x"', '[]', '{}', '{"k":"v"}', 'null'),
  fc.string({ maxLength: 6 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }),
  fc.jsonValue({ maxDepth: 1 }),
);
const toolCallEntry = fc.record(
  {
    index: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom(null, -1, 1.5, 'x')),
    id: idArbitrary,
    type: fc.constantFrom('function', '', null),
    function: fc.oneof(
      fc.record({ name: nameArbitrary, arguments: argumentsArbitrary }, { requiredKeys: [] }),
      fc.constantFrom(null, 'junk'),
    ),
  },
  { requiredKeys: [] },
);
const textArbitrary = fc.oneof(fc.constantFrom('', null, undefined), fc.string({ maxLength: 5 }));
const contentArbitrary = fc.oneof(
  { weight: 4, arbitrary: textArbitrary },
  {
    weight: 1,
    arbitrary: fc.array(
      fc.oneof(
        fc.record({ type: fc.constant('text'), text: fc.string({ maxLength: 4 }) }),
        fc.record({
          type: fc.constant('thinking'),
          thinking: fc.oneof(
            fc.string({ maxLength: 4 }),
            fc.array(fc.record({ type: fc.constant('text'), text: fc.string({ maxLength: 4 }) }), {
              maxLength: 2,
            }),
          ),
        }),
        fc.jsonValue({ maxDepth: 1 }),
      ),
      { maxLength: 3 },
    ),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
);
const deltaArbitrary = fc.record(
  {
    role: fc.constantFrom('assistant', undefined),
    content: contentArbitrary,
    reasoning_content: textArbitrary,
    reasoning: textArbitrary,
    reasoning_details: fc.array(
      fc.record({ type: fc.constant('reasoning.text'), text: fc.string({ maxLength: 3 }) }),
      { maxLength: 2 },
    ),
    refusal: fc.oneof(
      { weight: 9, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.string({ maxLength: 3 }) },
    ),
    tool_calls: fc.oneof(
      { weight: 8, arbitrary: fc.array(toolCallEntry, { maxLength: 3 }) },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
    ),
  },
  { requiredKeys: [] },
);
const usageArbitrary = fc.record(
  {
    prompt_tokens: fc.integer({ min: -1, max: 500 }),
    completion_tokens: fc.integer({ min: 0, max: 500 }),
    prompt_tokens_details: fc.record(
      { cached_tokens: fc.integer({ min: 0, max: 600 }) },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: [] },
);
const finishReasonArbitrary = fc.constantFrom(
  null,
  undefined,
  'stop',
  'length',
  'tool_calls',
  'content_filter',
  'error',
  'eos',
);
const chunkArbitrary: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record(
      {
        id: fc.constant('chatcmpl-1'),
        choices: fc.array(
          fc.record(
            {
              index: fc.constantFrom(0, undefined, 1),
              delta: fc.oneof(
                { weight: 9, arbitrary: deltaArbitrary },
                { weight: 1, arbitrary: fc.constant(null) },
              ),
              finish_reason: finishReasonArbitrary,
            },
            { requiredKeys: ['delta'] },
          ),
          { minLength: 1, maxLength: 2 },
        ),
        usage: fc.option(usageArbitrary, { nil: undefined }),
      },
      { requiredKeys: ['choices'] },
    ),
  },
  { weight: 2, arbitrary: fc.record({ choices: fc.constant([]), usage: usageArbitrary }) },
  {
    weight: 1,
    arbitrary: fc.constant({ id: '', choices: [], prompt_filter_results: [{ prompt_index: 0 }] }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      error: fc.oneof(fc.record({ code: fc.constantFrom(400, 429, 'x'), message: fc.string() }), fc.string()),
    }),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);

describe('law (a): any chunk sequence gives a valid Messages stream or a TransportError', () => {
  it('holds for adversarial chunk sequences', () => {
    fc.assert(
      fc.property(fc.array(chunkArbitrary, { maxLength: 30 }), fc.boolean(), (chunks, withDone) => {
        const items: Item[] = [
          ...(chunks as ChatCompletionChunk[]),
          ...(withDone ? (['done'] as const) : []),
        ];
        const result = run(items);
        expectLawfulStream(result);
        if (result.error !== undefined) return;
        const stop = result.events.at(-2) as { delta: { stop_reason: string } };
        expect(stop.delta.stop_reason).toBeDefined();
      }),
      { numRuns: 2000 },
    );
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------------
// (b) and (c): stream chunks cut from a non-streaming response

interface ToolCallSpec {
  id: string | null;
  name: string;
  input: Record<string, unknown>;
  /** How `arguments` is written: JSON, pretty JSON, an object (Ollama-style), or "" for `{}`. */
  form: 'json' | 'pretty' | 'object' | 'empty';
  /** When set, `arguments` is exactly this text (a call the token limit cut), whatever `form` says. */
  cutText?: string;
}

interface AnswerSpec {
  reasoning: string;
  reasoningField: 'reasoning_content' | 'reasoning';
  thinkingParts: string[];
  text: string;
  contentForm: 'string' | 'array';
  refusal: string;
  toolCalls: ToolCallSpec[];
  finishReason: string | null;
  usage: ChatCompletionUsage | undefined;
  usagePlacement: 'finish' | 'separate' | 'with-choices';
  indexBase: 0 | 1;
  indexless: boolean;
}

function toolCallSpec(
  idArbitrary: fc.Arbitrary<string | null>,
  nameArbitrary: fc.Arbitrary<string>,
): fc.Arbitrary<ToolCallSpec> {
  return fc
    .record({
      id: idArbitrary,
      name: nameArbitrary,
      input: toolInputs,
      form: fc.constantFrom('json', 'pretty', 'object', 'empty'),
    })
    .map((spec) => (spec.form === 'empty' ? { ...spec, input: {} } : spec));
}

function answerSpec(calls: fc.Arbitrary<ToolCallSpec[]>): fc.Arbitrary<AnswerSpec> {
  return fc.record({
    reasoning: fc.oneof(fc.constant(''), fc.string({ maxLength: 20 })),
    reasoningField: fc.constantFrom('reasoning_content', 'reasoning'),
    thinkingParts: fc.array(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 2 }),
    text: fc.oneof(fc.constant(''), fc.string({ maxLength: 30 })),
    contentForm: fc.constantFrom('string', 'array'),
    refusal: fc.oneof(
      { weight: 5, arbitrary: fc.constant('') },
      { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 10 }) },
    ),
    toolCalls: calls,
    finishReason: fc.constantFrom('stop', 'tool_calls', 'length', 'content_filter', null),
    usage: fc.option(
      fc.record({
        prompt_tokens: fc.nat(1000),
        completion_tokens: fc.nat(1000),
        prompt_tokens_details: fc.record({ cached_tokens: fc.nat(1000) }),
      }),
      { nil: undefined },
    ),
    usagePlacement: fc.constantFrom('finish', 'separate', 'with-choices'),
    indexBase: fc.constantFrom(0, 1),
    indexless: fc.boolean(),
  });
}

function argumentsOf(call: ToolCallSpec): string | Record<string, unknown> {
  if (call.cutText !== undefined) return call.cutText;
  switch (call.form) {
    case 'json':
      return JSON.stringify(call.input);
    case 'pretty':
      return JSON.stringify(call.input, null, 2);
    case 'object':
      return call.input;
    case 'empty':
      return '';
  }
}

function responseOf(spec: AnswerSpec): ChatCompletionResponse {
  const thinkingParts = spec.thinkingParts.map((text) => ({
    type: 'thinking',
    thinking: [{ type: 'text', text }],
  }));
  const content =
    spec.contentForm === 'string' ? spec.text : [...thinkingParts, { type: 'text', text: spec.text }];
  return {
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content,
          [spec.reasoningField]: spec.reasoning,
          refusal: spec.refusal === '' ? null : spec.refusal,
          ...(spec.toolCalls.length > 0
            ? {
                tool_calls: spec.toolCalls.map((call) => ({
                  id: call.id,
                  type: 'function',
                  function: { name: call.name, arguments: argumentsOf(call) },
                })),
              }
            : {}),
        },
        finish_reason: spec.finishReason,
      },
    ],
    ...(spec.usage !== undefined ? { usage: spec.usage } : {}),
  };
}

const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}): ChatCompletionChunk => ({
  id: 'chatcmpl-law',
  object: 'chat.completion.chunk',
  choices: [{ index: 0, delta, finish_reason: null }],
  ...extra,
});

/** The chunks a server could have streamed for this answer, cut and interleaved at random. */
function chunksOf(spec: AnswerSpec, random: fc.GeneratorValue): Item[] {
  const items: Item[] = [];
  if (random(fc.boolean)) items.push({ id: '', choices: [], prompt_filter_results: [{ prompt_index: 0 }] });
  items.push(chunk({ role: 'assistant', content: '' }));
  for (const piece of cutAtRandom(spec.reasoning, random))
    items.push(chunk({ [spec.reasoningField]: piece, content: null }));
  if (spec.contentForm === 'array') {
    for (const text of spec.thinkingParts)
      items.push(chunk({ content: [{ type: 'thinking', thinking: [{ type: 'text', text }] }] }));
  }
  for (const piece of cutAtRandom(spec.text, random)) {
    items.push(
      chunk(
        random(fc.boolean)
          ? { content: piece }
          : { role: 'assistant', content: [{ type: 'text', text: piece }] },
      ),
    );
  }
  for (const piece of cutAtRandom(spec.refusal, random)) items.push(chunk({ refusal: piece }));

  // Each call's fragments, in order: the first carries id, type and name.
  const queues = spec.toolCalls.map((call, position) => {
    const argumentsValue = argumentsOf(call);
    const pieces: (string | Record<string, unknown>)[] =
      typeof argumentsValue === 'string' ? cutAtRandom(argumentsValue, random) : [argumentsValue];
    if (random(fc.boolean) || pieces.length === 0) pieces.unshift('');
    return pieces.map((piece, fragment) => {
      const entry: Record<string, unknown> = spec.indexless ? {} : { index: position + spec.indexBase };
      if (fragment === 0)
        Object.assign(entry, {
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: piece },
        });
      else
        Object.assign(
          entry,
          { function: { arguments: piece } },
          random(fc.boolean) ? { id: '', type: 'function' } : {},
        );
      return entry;
    });
  });
  // Interleave: a call starts only after the previous one started; index-less servers cannot interleave.
  const entries: Record<string, unknown>[] = [];
  let started = 0;
  const remaining = queues.map((queue) => [...queue]);
  while (remaining.some((queue) => queue.length > 0)) {
    const candidates = remaining
      .map((queue, position) => ({ queue, position }))
      .filter(({ queue, position }) => queue.length > 0 && position <= started);
    const choice = spec.indexless
      ? candidates[0]!
      : candidates[random(fc.nat, { max: candidates.length - 1 })]!;
    if (choice.position === started) started++;
    entries.push(choice.queue.shift()!);
  }
  while (entries.length > 0) {
    const size = spec.indexless ? 1 : random(fc.integer, { min: 1, max: 3 });
    items.push(chunk({ tool_calls: entries.splice(0, size) }));
  }

  const usage = spec.usage;
  if (spec.finishReason !== null) {
    const finishChunk = chunk({}, usage !== undefined && spec.usagePlacement === 'finish' ? { usage } : {});
    finishChunk.choices![0]!.finish_reason = spec.finishReason;
    items.push(finishChunk);
  }
  if (usage !== undefined && spec.usagePlacement === 'separate')
    items.push({ id: 'chatcmpl-law', choices: [], usage });
  if (usage !== undefined && spec.usagePlacement === 'with-choices')
    items.push(chunk({ role: 'assistant', content: '' }, { usage }));
  if (usage !== undefined && spec.usagePlacement === 'finish' && spec.finishReason === null)
    items.push(chunk({}, { usage }));
  if (spec.finishReason === null || random(fc.boolean)) items.push('done');
  return items;
}

const plainIds = fc.oneof(
  fc.constantFrom('call_1', 'call_2', 'dup', 'dup', '', null, 'functions.read:0', 'tpx_e', 'toolu_x'),
  fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/),
);

describe('law (b): streaming and non-streaming translations agree', () => {
  it('accumulates the translated stream into exactly the translated response, also in the official SDK', async () => {
    await assertStreamAgreesWithWhole(
      answerSpec(fc.array(toolCallSpec(plainIds, upstreamToolNames), { maxLength: 4 })),
      (spec) => translateResponse(responseOf(spec), context()),
      (spec, random) => run(chunksOf(spec, random)),
    );
  }, 60_000);
});

/** `value` with each ExactNumber replaced by its nearest double (what a reader of doubles holds). */
function asDoubles(value: unknown): unknown {
  if (value instanceof ExactNumber) return Number(value);
  if (Array.isArray(value)) return value.map(asDoubles);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, asDoubles(item)]));
  }
  return value;
}

describe('law (b) for calls the token limit cut', () => {
  it('gives the same message streamed and not, when `length` cut the last call anywhere in its JSON', async () => {
    await fc.assert(
      fc.asyncProperty(
        answerSpec(fc.array(toolCallSpec(plainIds, upstreamToolNames), { minLength: 1, maxLength: 3 })),
        fc.nat(),
        fc.gen(),
        async (generated, at, random) => {
          const calls = [...generated.toolCalls];
          const last = calls.at(-1)!;
          const whole = JSON.stringify(last.input, null, last.form === 'pretty' ? 2 : 0);
          calls[calls.length - 1] = { ...last, cutText: whole.slice(0, 1 + (at % whole.length)) };
          const spec: AnswerSpec = { ...generated, toolCalls: calls, finishReason: 'length' };

          const expected = translateResponse(responseOf(spec), context());
          expect(expected.stop_reason).toBe('max_tokens');
          expect(expected.content.filter((block) => block.type === 'tool_use')).toHaveLength(calls.length);
          const { events, error } = run(chunksOf(spec, random));
          expect(error).toBeUndefined();
          expect(grammarVerdict(events)).toEqual({ violation: undefined, end: undefined });
          expect(accumulateStream(events)).toEqual(expected);
          const sdk = await sdkFinalMessage(events);
          // The SDK reads numbers as doubles; a cut number completed to more digits than a double keeps
          // is an ExactNumber here, whose nearest double is what the SDK holds.
          expect(sdk['content']).toEqual(asDoubles(expected.content));
        },
      ),
      { numRuns: 300 },
    );
  }, 60_000);
});

describe('law (c): tool ids, names and arguments survive streaming exactly', () => {
  it('gives the codec ids of the provider ids, the mapped names and the parsed arguments, in order', () => {
    const anyId = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.constantFrom(null, '', 'dup', 'dup'),
      fc.string({ unit: 'binary', maxLength: 6 }),
    );
    const anyName = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(
        fc.array(toolCallSpec(anyId, anyName), { minLength: 1, maxLength: 5 }),
        fc.gen(),
        (calls, random) => {
          const spec: AnswerSpec = {
            reasoning: '',
            reasoningField: 'reasoning',
            thinkingParts: [],
            text: '',
            contentForm: 'string',
            refusal: '',
            toolCalls: calls,
            finishReason: 'tool_calls',
            usage: undefined,
            usagePlacement: 'finish',
            indexBase: 0,
            indexless: false,
          };
          const { events, error } = run(chunksOf(spec, random));
          expect(error).toBeUndefined();
          const message: Message = accumulateStream(events);
          const blocks = message.content as { type: string; id: string; name: string; input: unknown }[];
          let counter = 1; // gen1 is the message id
          const expectedIds = encodeToolIds(
            calls.map((call) => call.id),
            () => `gen${++counter}`,
          );
          expect(blocks.map((block) => block.type)).toEqual(calls.map(() => 'tool_use'));
          expect(blocks.map((block) => block.id)).toEqual(expectedIds);
          const wireIds = blocks.map((block) => decodeToolId(block.id));
          expect(new Set(wireIds).size).toBe(blocks.length);
          blocks.forEach((block, position) => {
            const call = calls[position]!;
            // A first occurrence goes back as the provider gave it (unless an earlier call already holds
            // that string as its wire id); a repeat goes back under the distinct id the caller was shown.
            const isFirst = calls.findIndex((other) => other.id === call.id) === position;
            if (
              call.id !== null &&
              call.id !== '' &&
              isFirst &&
              !wireIds.slice(0, position).includes(call.id)
            )
              expect(wireIds[position]).toBe(call.id);
            expect(block.name).toBe(context().toolNames.fromUpstream(call.name));
            const written = argumentsOf(call);
            expect(block.input).toEqual(
              typeof written === 'string' ? (written === '' ? {} : JSON.parse(written)) : written,
            );
          });
        },
      ),
      { numRuns: 600 },
    );
  }, 60_000);
});
