/**
 * Property-based laws of Responses stream translation, the same as for Chat Completions:
 * (a) any event sequence gives a grammar-valid Messages stream ending in message_stop, or a TransportError,
 *     and never tool input the caller cannot parse;
 * (b) streaming and non-streaming translations of the same answer give the same message, through our
 *     accumulator and through the official SDK's `MessageStream`, whether the server numbers its events
 *     (OpenAI) or not (llama.cpp);
 * (c) tool ids survive as the tool-id codec's image of the `call_id`s, and reasoning signatures restore
 *     the reasoning items.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { accumulateStream } from '../../test/helpers/accumulate-stream.js';
import type { ResponsesOutputItem, ResponsesResponse, ResponsesStreamEvent } from '../protocol/responses.js';
import {
  assertStreamAgreesWithWhole,
  cutAtRandom,
  expectLawfulStream,
  toolInputs,
  upstreamToolNames,
  runTranslator,
  type TranslatorRun,
} from '../../test/helpers/stream-laws.js';
import { decodeReasoningSignature } from './reasoning-signature-codec.js';
import { decodeToolId, encodeToolIds } from './tool-id-codec.js';
import { translateResponsesResponse, type ResponsesContext } from './translate-responses-response.js';
import { ResponsesStreamTranslator } from './translate-responses-stream.js';

function context(maxOutputTokens?: number): ResponsesContext {
  let counter = 0;
  return {
    requestModel: 'claude-sonnet-4-5',
    toolNames: { fromUpstream: (name) => (name.startsWith('up_') ? name.slice(3) : name) },
    generateId: () => `gen${++counter}`,
    ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
  };
}

/** Runs the state machine; any exception other than a TransportError escapes and fails the property. */
function run(items: readonly unknown[], maxOutputTokens?: number): TranslatorRun {
  const translator = new ResponsesStreamTranslator(context(maxOutputTokens));
  return runTranslator(translator.start(), (emit) => {
    for (const item of items) {
      emit(translator.push(item as ResponsesStreamEvent));
      if (translator.isFinished) break;
    }
    emit(translator.end());
  });
}

// ---------------------------------------------------------------------------------------------------
// (a) Adversarial event sequences

const itemIds = fc.constantFrom(undefined, 'rs_1', 'msg_1', 'fc_1', 'fc_2', 'x');
const adversarialItem = fc.record(
  {
    type: fc.constantFrom('message', 'reasoning', 'function_call', 'web_search_call', null, undefined),
    id: itemIds,
    call_id: fc.constantFrom(undefined, null, '', 'call_1', 'call_1', 'functions.read:0'),
    name: fc.constantFrom(undefined, null, '', 'f', 'up_g'),
    arguments: fc.oneof(
      fc.constantFrom(undefined, '', '{', '{}', '{"a":1}', '[]', 'null', '"x"'),
      fc.jsonValue({ maxDepth: 1 }),
    ),
    content: fc.oneof(
      fc.constant(undefined),
      fc.array(
        fc.oneof(
          fc.record({ type: fc.constant('output_text'), text: fc.string({ maxLength: 4 }) }),
          fc.record({ type: fc.constant('refusal'), refusal: fc.string({ maxLength: 4 }) }),
          fc.record({ type: fc.constant('reasoning_text'), text: fc.string({ maxLength: 4 }) }),
        ),
        { maxLength: 2 },
      ),
    ),
    summary: fc.oneof(
      fc.constant(undefined),
      fc.array(fc.record({ type: fc.constant('summary_text'), text: fc.string({ maxLength: 4 }) }), {
        maxLength: 2,
      }),
    ),
    encrypted_content: fc.constantFrom(undefined, null, 'gAAAA'),
  },
  { requiredKeys: [] },
);
const usage = fc.record(
  {
    input_tokens: fc.integer({ min: -1, max: 500 }),
    output_tokens: fc.integer({ min: 0, max: 500 }),
    input_tokens_details: fc.record({ cached_tokens: fc.integer({ min: 0, max: 600 }) }),
    output_tokens_details: fc.record({ reasoning_tokens: fc.integer({ min: 0, max: 600 }) }),
  },
  { requiredKeys: [] },
);
const terminalResponse = fc.record(
  {
    status: fc.constantFrom('completed', 'incomplete', 'failed', 'cancelled', 'in_progress', undefined),
    output: fc.array(adversarialItem, { maxLength: 2 }),
    usage,
    incomplete_details: fc.record({ reason: fc.constantFrom('max_output_tokens', 'content_filter', 'x') }),
    error: fc.record({
      code: fc.constantFrom('server_error', 'insufficient_quota', 'x'),
      message: fc.string(),
    }),
  },
  { requiredKeys: [] },
);
const eventArbitrary: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record(
      {
        type: fc.constantFrom('response.output_item.added', 'response.output_item.done'),
        output_index: fc.constantFrom(undefined, 0, 1, 2),
        item: adversarialItem,
      },
      { requiredKeys: ['type', 'item'] },
    ),
  },
  {
    weight: 8,
    arbitrary: fc.record(
      {
        type: fc.constantFrom(
          'response.output_text.delta',
          'response.refusal.delta',
          'response.reasoning_summary_text.delta',
          'response.reasoning_text.delta',
          'response.function_call_arguments.delta',
          'response.function_call_arguments.done',
          'response.content_part.added',
          'response.something_new',
        ),
        item_id: itemIds,
        output_index: fc.constantFrom(undefined, 0, 1),
        summary_index: fc.constantFrom(undefined, 0, 1),
        delta: fc.oneof(fc.string({ maxLength: 5 }), fc.constantFrom('{"a":', '1}', '{}', null)),
        arguments: fc.constantFrom(undefined, '{}', '{"b":2}', '{'),
      },
      { requiredKeys: ['type'] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constantFrom('response.completed', 'response.incomplete', 'response.failed'),
      response: terminalResponse,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ type: fc.constant('error'), code: fc.string(), message: fc.string() }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('response.created'), response: fc.constant({}) }) },
);

describe('law (a): any event sequence gives a valid Messages stream or a TransportError', () => {
  it('holds for adversarial event sequences', () => {
    fc.assert(
      fc.property(
        fc.array(eventArbitrary, { maxLength: 25 }),
        fc.option(fc.integer({ min: 1, max: 400 }), { nil: undefined }),
        (items, maxOutputTokens) => {
          expectLawfulStream(run(items, maxOutputTokens));
        },
      ),
      { numRuns: 3000 },
    );
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------------
// (b) and (c): events cut from a response object

type ItemSpec =
  | {
      kind: 'reasoning';
      id: string | undefined;
      summary: string[];
      content: string[];
      encrypted: string | undefined;
    }
  | { kind: 'message'; id: string; parts: { refusal: boolean; text: string }[] }
  | {
      kind: 'function_call';
      id: string;
      callId: string | undefined;
      name: string;
      input: Record<string, unknown>;
      pretty: boolean;
      /** The arguments as the output limit cut them (only in a response cut by `max_output_tokens`). */
      cutArguments?: string;
    };

interface AnswerSpec {
  items: ItemSpec[];
  status: 'completed' | 'incomplete';
  incompleteReason: 'max_output_tokens' | 'content_filter';
  usage: Record<string, unknown> | undefined;
  /** OpenAI numbers events (`output_index`, `sequence_number`); llama.cpp sends only `item_id`. */
  numbered: boolean;
  /** Whether the server sends `response.output_item.added` / `.function_call_arguments.done` events. */
  announces: boolean;
  /** In a response cut by `max_output_tokens`: whether the last call is cut, and where (a fraction). */
  cutsLastCall: boolean;
  cutFraction: number;
}

function itemSpec(
  callIds: fc.Arbitrary<string | undefined>,
  names: fc.Arbitrary<string>,
): fc.Arbitrary<ItemSpec> {
  return fc.oneof(
    fc.record({
      kind: fc.constant('reasoning' as const),
      id: fc.option(fc.stringMatching(/^rs_[a-z0-9]{1,6}$/), { nil: undefined }),
      summary: fc.array(fc.string({ minLength: 1, maxLength: 12 }), { maxLength: 2 }),
      content: fc.array(fc.string({ minLength: 1, maxLength: 12 }), { maxLength: 2 }),
      encrypted: fc.option(fc.base64String({ minLength: 4, maxLength: 40 }), { nil: undefined }),
    }),
    fc.record({
      kind: fc.constant('message' as const),
      id: fc.stringMatching(/^msg_[a-z0-9]{1,6}$/),
      parts: fc.array(
        fc.record({
          refusal: fc.oneof(
            { weight: 5, arbitrary: fc.constant(false) },
            { weight: 1, arbitrary: fc.constant(true) },
          ),
          text: fc.string({ maxLength: 20 }),
        }),
        { maxLength: 2 },
      ),
    }),
    fc.record({
      kind: fc.constant('function_call' as const),
      id: fc.stringMatching(/^fc_[a-z0-9]{1,6}$/),
      callId: callIds,
      name: names,
      input: toolInputs,
      pretty: fc.boolean(),
    }),
  );
}

function answerSpec(items: fc.Arbitrary<ItemSpec[]>): fc.Arbitrary<AnswerSpec> {
  return fc
    .record({
      items: items.map(uniqueItemIds),
      status: fc.constantFrom('completed', 'incomplete'),
      incompleteReason: fc.constantFrom('max_output_tokens', 'content_filter'),
      usage: fc.option(
        fc.record({
          input_tokens: fc.nat(1000),
          output_tokens: fc.nat(1000),
          input_tokens_details: fc.record({ cached_tokens: fc.nat(1000) }),
          output_tokens_details: fc.record({ reasoning_tokens: fc.nat(1000) }),
        }),
        { nil: undefined },
      ),
      numbered: fc.boolean(),
      announces: fc.boolean(),
      cutsLastCall: fc.boolean(),
      cutFraction: fc.double({ min: 0, max: 1, noNaN: true }),
    })
    .map((spec) => (spec.numbered ? spec : { ...spec, items: spec.items.map(withItemId) }))
    .map(withCutCall);
}

/**
 * The limit stops the arguments of a call that is the last item anywhere, as llama.cpp's recorded
 * `{ "city"` shows (the limit ends the output, so nothing follows what it cut).
 */
function withCutCall(spec: AnswerSpec): AnswerSpec {
  const isLimitCut = spec.status === 'incomplete' && spec.incompleteReason === 'max_output_tokens';
  const last = spec.items.length - 1;
  if (!isLimitCut || !spec.cutsLastCall || spec.items[last]?.kind !== 'function_call') return spec;
  const items = spec.items.map((item, position) => {
    if (position !== last || item.kind !== 'function_call') return item;
    const full = argumentsOf(item);
    return { ...item, cutArguments: full.slice(0, Math.floor(spec.cutFraction * full.length)) };
  });
  return { ...spec, items };
}

/** The same answer, finished: no call is cut. */
function uncut(spec: AnswerSpec): AnswerSpec {
  const items = spec.items.map((item) => {
    if (item.kind !== 'function_call') return item;
    const { cutArguments: _cut, ...whole } = item;
    return whole;
  });
  return { ...spec, status: 'completed', items };
}

/** llama.cpp gives every item an id; only servers that number their events can leave one out. */
function withItemId(item: ItemSpec, position: number): ItemSpec {
  return item.kind === 'reasoning' && item.id === undefined ? { ...item, id: `rs_given_${position}` } : item;
}

/** Servers give each item its own id; the generated ones may repeat, so they are numbered apart. */
function uniqueItemIds(items: ItemSpec[]): ItemSpec[] {
  return items.map((item, position) =>
    item.id === undefined ? item : { ...item, id: `${item.id}_${position}` },
  );
}

function argumentsOf(item: Extract<ItemSpec, { kind: 'function_call' }>): string {
  if (item.cutArguments !== undefined) return item.cutArguments;
  return item.pretty ? JSON.stringify(item.input, null, 2) : JSON.stringify(item.input);
}

function outputItemOf(item: ItemSpec): ResponsesOutputItem {
  switch (item.kind) {
    case 'reasoning':
      return {
        type: 'reasoning',
        ...(item.id === undefined ? {} : { id: item.id }),
        summary: item.summary.map((text) => ({ type: 'summary_text', text })),
        ...(item.content.length > 0
          ? { content: item.content.map((text) => ({ type: 'reasoning_text', text })) }
          : {}),
        ...(item.encrypted === undefined ? {} : { encrypted_content: item.encrypted }),
      };
    case 'message':
      return {
        type: 'message',
        id: item.id,
        role: 'assistant',
        status: 'completed',
        content: item.parts.map((part) =>
          part.refusal
            ? { type: 'refusal', refusal: part.text }
            : { type: 'output_text', text: part.text, annotations: [] },
        ),
      };
    case 'function_call':
      return {
        type: 'function_call',
        id: item.id,
        ...(item.callId === undefined ? {} : { call_id: item.callId }),
        name: item.name,
        arguments: argumentsOf(item),
        status: 'completed',
      };
  }
}

function responseOf(spec: AnswerSpec): ResponsesResponse {
  return {
    object: 'response',
    status: spec.status,
    ...(spec.status === 'incomplete' ? { incomplete_details: { reason: spec.incompleteReason } } : {}),
    output: spec.items.map(outputItemOf),
    ...(spec.usage === undefined ? {} : { usage: spec.usage }),
  };
}

/** The events a server could have streamed for this answer, deltas cut at random. */
function eventsOf(spec: AnswerSpec, random: fc.GeneratorValue): ResponsesStreamEvent[] {
  const response = responseOf(spec);
  const events: ResponsesStreamEvent[] = [];
  const add = (event: ResponsesStreamEvent, outputIndex?: number): void => {
    const numbered = spec.numbered
      ? {
          sequence_number: events.length,
          ...(outputIndex === undefined ? {} : { output_index: outputIndex }),
        }
      : {};
    events.push({ ...event, ...numbered });
  };
  add({ type: 'response.created', response: { status: 'in_progress', output: [] } });
  spec.items.forEach((item, outputIndex) => {
    const full = outputItemOf(item);
    const itemId = full.id ?? undefined;
    const idField = itemId === undefined ? {} : { item_id: itemId };
    if (spec.announces) {
      const announced: ResponsesOutputItem =
        item.kind === 'function_call'
          ? { ...full, arguments: '', status: 'in_progress' }
          : item.kind === 'message'
            ? { ...full, content: [], status: 'in_progress' }
            : { ...full, summary: [], content: [] };
      add({ type: 'response.output_item.added', item: announced }, outputIndex);
    }
    switch (item.kind) {
      case 'reasoning':
        item.summary.forEach((text, summaryIndex) => {
          for (const piece of cutAtRandom(text, random))
            add(
              {
                type: 'response.reasoning_summary_text.delta',
                ...idField,
                summary_index: summaryIndex,
                delta: piece,
              },
              outputIndex,
            );
        });
        if (item.summary.length === 0) {
          item.content.forEach((text, contentIndex) => {
            for (const piece of cutAtRandom(text, random))
              add(
                {
                  type: 'response.reasoning_text.delta',
                  ...idField,
                  content_index: contentIndex,
                  delta: piece,
                },
                outputIndex,
              );
          });
        }
        break;
      case 'message':
        item.parts.forEach((part, contentIndex) => {
          for (const piece of cutAtRandom(part.text, random))
            add(
              {
                type: part.refusal ? 'response.refusal.delta' : 'response.output_text.delta',
                ...idField,
                content_index: contentIndex,
                delta: piece,
              },
              outputIndex,
            );
        });
        break;
      case 'function_call':
        for (const piece of cutAtRandom(argumentsOf(item), random))
          add({ type: 'response.function_call_arguments.delta', ...idField, delta: piece }, outputIndex);
        if (spec.announces)
          add(
            { type: 'response.function_call_arguments.done', ...idField, arguments: argumentsOf(item) },
            outputIndex,
          );
        break;
    }
    add({ type: 'response.output_item.done', item: full }, outputIndex);
  });
  add({ type: spec.status === 'completed' ? 'response.completed' : 'response.incomplete', response });
  return events;
}

const callIds = fc.oneof(
  fc.constantFrom('call_1', 'call_2', 'dup', 'dup', undefined, 'functions.read:0', 'tpx_e'),
  fc.stringMatching(/^call_[A-Za-z0-9]{1,12}$/),
);

describe('law (b): streaming and non-streaming translations agree', () => {
  it('accumulates the translated stream into exactly the translated response, also in the official SDK', async () => {
    await assertStreamAgreesWithWhole(
      answerSpec(fc.array(itemSpec(callIds, upstreamToolNames), { maxLength: 5 })),
      (spec) => translateResponsesResponse(responseOf(spec), context()),
      (spec, random) => run(eventsOf(spec, random)),
    );
  }, 60_000);

  it('translates a stream that sends only the terminal event as the whole response', () => {
    fc.assert(
      fc.property(answerSpec(fc.array(itemSpec(callIds, upstreamToolNames), { maxLength: 4 })), (spec) => {
        const expected = translateResponsesResponse(responseOf(spec), context());
        const terminal: ResponsesStreamEvent = {
          type: spec.status === 'completed' ? 'response.completed' : 'response.incomplete',
          response: responseOf(spec),
        };
        const { events, error } = run([terminal]);
        expect(error).toBeUndefined();
        expect(accumulateStream(events)).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });
});

describe('law (c): tool ids and reasoning survive streaming exactly', () => {
  it('gives the codec ids of the call ids in order, and signatures that restore each reasoning item', () => {
    const anyCallId = fc.oneof(
      fc.string({ maxLength: 12 }).map((id) => (id === '' ? undefined : id)),
      fc.constantFrom(undefined, 'dup', 'dup'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 6 }),
    );
    fc.assert(
      fc.property(
        answerSpec(fc.array(itemSpec(anyCallId, upstreamToolNames), { minLength: 1, maxLength: 6 })),
        fc.gen(),
        (spec, random) => {
          const completed = uncut(spec);
          const { events, error } = run(eventsOf(completed, random));
          expect(error).toBeUndefined();
          const message = accumulateStream(events);
          const calls = completed.items.filter((item) => item.kind === 'function_call');
          let counter = 1; // gen1 is the message id
          const expectedIds = encodeToolIds(
            calls.map((call) => call.callId),
            () => `gen${++counter}`,
          );
          const toolBlocks = message.content.filter((block) => block.type === 'tool_use') as {
            id: string;
            input: unknown;
          }[];
          expect(toolBlocks.map((block) => block.id)).toEqual(expectedIds);
          const wireIds = toolBlocks.map((block) => decodeToolId(block.id));
          expect(new Set(wireIds).size).toBe(toolBlocks.length);
          toolBlocks.forEach((block, position) => {
            const call = calls[position]!;
            // A first occurrence goes back as the provider gave it (unless an earlier call already holds
            // that string as its wire id); a repeat goes back under the distinct id the caller was shown.
            const isFirst = calls.findIndex((other) => other.callId === call.callId) === position;
            if (call.callId !== undefined && isFirst && !wireIds.slice(0, position).includes(call.callId))
              expect(wireIds[position]).toBe(call.callId);
            expect(block.input).toEqual(call.input);
          });

          const reasoning = completed.items.filter(
            (item): item is Extract<ItemSpec, { kind: 'reasoning' }> =>
              item.kind === 'reasoning' && (item.id !== undefined || item.encrypted !== undefined),
          );
          const signatures = message.content
            .filter((block) => block.type === 'thinking')
            .map((block) => (block as { signature: string }).signature)
            .filter((signature) => signature !== '');
          expect(signatures.map((signature) => decodeReasoningSignature(signature))).toEqual(
            reasoning.map((item) => ({
              id: item.id,
              encryptedContent: item.encrypted,
              source: item.summary.length === 0 && item.content.length > 0 ? 'content' : 'summary',
            })),
          );
        },
      ),
      { numRuns: 500 },
    );
  }, 60_000);
});
