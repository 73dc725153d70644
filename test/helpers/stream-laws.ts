/**
 * What the stream-translation laws of both wires check a translated event sequence with: drive a
 * translator to its end or its typed error, judge the events by the Messages stream grammar, and read
 * them back as the official SDK's `MessageStream` would.
 *
 * @module
 */
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import fc from 'fast-check';
import { expect } from 'vitest';
import { isTransportError, type TransportError } from '../../src/errors.js';
import type { Message, MessageStreamEvent } from '../../src/protocol/messages.js';
import { createStreamGrammar } from '../../src/protocol/stream-grammar.js';
import { validateStreamEvent } from '../../src/protocol/validate-messages.js';
import { accumulateStream } from './accumulate-stream.js';

/** The events a translator produced, and the TransportError that ended it, if one did. */
export interface TranslatorRun {
  events: MessageStreamEvent[];
  error: TransportError | undefined;
}

/**
 * Collects what `drive` emits after the `start` events. A TransportError thrown by `drive` ends the run
 * with the events emitted so far; any other exception escapes, so a property that meets one fails.
 */
export function runTranslator(
  start: Iterable<MessageStreamEvent>,
  drive: (emit: (events: Iterable<MessageStreamEvent>) => void) => void,
): TranslatorRun {
  const events: MessageStreamEvent[] = [...start];
  try {
    drive((emitted) => events.push(...emitted));
    return { events, error: undefined };
  } catch (error) {
    if (!isTransportError(error)) throw error;
    return { events, error };
  }
}

/** The first violation (one event's shape, or the order), or else the grammar's end-of-stream verdict. */
export function grammarVerdict(events: readonly MessageStreamEvent[]): {
  violation: string | undefined;
  end: string | undefined;
} {
  const grammar = createStreamGrammar();
  for (const event of events) {
    const validation = validateStreamEvent(event);
    if (!validation.ok) return { violation: validation.message, end: undefined };
    const violation = grammar.accept(event);
    if (violation !== undefined) return { violation, end: undefined };
  }
  return { violation: undefined, end: grammar.end() };
}

/** The message the official SDK's `MessageStream` assembles from `events`. */
export async function sdkFinalMessage(
  events: readonly MessageStreamEvent[],
): Promise<Record<string, unknown>> {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const event of events) controller.enqueue(encoder.encode(`${JSON.stringify(event)}\n`));
      controller.close();
    },
  });
  return (await MessageStream.fromReadableStream(body).finalMessage()) as unknown as Record<string, unknown>;
}

/**
 * Law (a) of both wires for one run: every event is valid and in grammar order; a run that failed never
 * delivered `message_stop`; one that did not ends with it, its tool ids distinct and in the Messages id
 * alphabet, and the strict accumulator reads it into a message.
 */
export function expectLawfulStream({ events, error }: TranslatorRun): void {
  const verdict = grammarVerdict(events);
  expect(verdict.violation).toBeUndefined();
  if (error !== undefined) {
    expect(events.map((event) => event.type)).not.toContain('message_stop');
    return;
  }
  expect(verdict.end).toBeUndefined();
  expect(events.at(-1)).toEqual({ type: 'message_stop' });
  const ids = events.flatMap((event) =>
    event.type === 'content_block_start' && event.content_block.type === 'tool_use'
      ? [event.content_block.id]
      : [],
  );
  expect(new Set(ids).size).toBe(ids.length);
  for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
  // Every tool input is a complete JSON object, a call cut by the token limit included.
  expect(() => accumulateStream(events)).not.toThrow();
}

/**
 * Law (b) of both wires for one run: the stream ended cleanly, and both our strict accumulator and the
 * official SDK read it as `expected`, the translation of the same answer whole.
 */
export async function expectSameAsWhole({ events, error }: TranslatorRun, expected: Message): Promise<void> {
  expect(error).toBeUndefined();
  expect(grammarVerdict(events)).toEqual({ violation: undefined, end: undefined });
  expect(accumulateStream(events)).toEqual(expected);
  const sdk = await sdkFinalMessage(events);
  expect({ content: sdk['content'], stop_reason: sdk['stop_reason'], usage: sdk['usage'] }).toEqual({
    content: expected.content,
    stop_reason: expected.stop_reason,
    usage: expected.usage,
  });
}

/** Tool names as upstreams send them: the request's own (`up_` marks one the codec renamed) or others. */
export const upstreamToolNames: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('read', 'up_write', 'get_weather'),
  fc.stringMatching(/^[a-z_]{1,10}$/),
);

/**
 * Law (b) as a property: for every generated answer, its stream (cut as `stream` cuts it, with the
 * generator's randomness) translates to what `whole` gives for the same answer sent whole.
 */
export async function assertStreamAgreesWithWhole<Spec>(
  specs: fc.Arbitrary<Spec>,
  whole: (spec: Spec) => Message,
  stream: (spec: Spec, random: fc.GeneratorValue) => TranslatorRun,
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(specs, fc.gen(), async (spec, random) => {
      await expectSameAsWhole(stream(spec, random), whole(spec));
    }),
    { numRuns: 300 },
  );
}

/** Cuts a string at random points (any code unit, surrogate pairs included), as a server's deltas may. */
export function cutAtRandom(text: string, random: fc.GeneratorValue): string[] {
  if (text === '') return [];
  const points = random(() =>
    fc.array(fc.integer({ min: 1, max: Math.max(1, text.length - 1) }), { maxLength: 4 }),
  );
  const sorted = [...new Set(points.filter((point) => point < text.length))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let start = 0;
  for (const point of sorted) {
    pieces.push(text.slice(start, point));
    start = point;
  }
  pieces.push(text.slice(start));
  return pieces;
}

/** Tool inputs: small JSON objects, as a model's arguments parse to. */
export const toolInputs: fc.Arbitrary<Record<string, unknown>> = fc
  .dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
  .map((value) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>);
