/**
 * The Responses stream translator on hand-built event sequences: the exact Messages events for each
 * kind of item, for events without ids or indexes, for items only the terminal response shows, and the
 * errors of a stream that breaks its own rules.
 */
import { describe, expect, it } from 'vitest';
import { isTransportError, type TransportError } from '../errors.js';
import type { MessageStreamEvent } from '../protocol/messages.js';
import type { ResponsesStreamEvent } from '../protocol/responses.js';
import { encodeReasoningSignature } from './reasoning-signature-codec.js';
import { encodeToolId } from './tool-id-codec.js';
import { ResponsesStreamTranslator, type ResponsesStreamContext } from './translate-responses-stream.js';

const loose = <T>(value: unknown): T => value as T;

function context(fields: Partial<ResponsesStreamContext> = {}): ResponsesStreamContext {
  let counter = 0;
  return {
    requestModel: 'claude-test',
    toolNames: { fromUpstream: (name) => `caller_${name}` },
    generateId: () => `gen${++counter}`,
    ...fields,
  };
}

/** The events after `message_start`, up to the first error (returned beside them). */
function translate(
  events: readonly Record<string, unknown>[],
  fields: Partial<ResponsesStreamContext> = {},
): { events: MessageStreamEvent[]; error: TransportError | undefined } {
  const translator = new ResponsesStreamTranslator(context(fields));
  translator.start();
  const out: MessageStreamEvent[] = [];
  try {
    for (const event of events) out.push(...translator.push(loose<ResponsesStreamEvent>(event)));
    out.push(...translator.end());
    return { events: out, error: undefined };
  } catch (error) {
    if (!isTransportError(error)) throw error;
    return { events: out, error };
  }
}

const completed = (response: Record<string, unknown> = {}) => ({
  type: 'response.completed',
  response: { status: 'completed', usage: { input_tokens: 10, output_tokens: 5 }, ...response },
});

const end = (stopReason: string, usage = { input_tokens: 10, output_tokens: 5 }): MessageStreamEvent[] => [
  {
    type: 'message_delta',
    delta: { stop_reason: loose(stopReason), stop_sequence: null },
    usage: { ...usage, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  },
  { type: 'message_stop' },
];

const textStart = (index: number): MessageStreamEvent => ({
  type: 'content_block_start',
  index,
  content_block: { type: 'text', text: '' },
});
const thinkingStart = (index: number): MessageStreamEvent => ({
  type: 'content_block_start',
  index,
  content_block: { type: 'thinking', thinking: '', signature: '' },
});
const textDelta = (index: number, text: string): MessageStreamEvent => ({
  type: 'content_block_delta',
  index,
  delta: { type: 'text_delta', text },
});
const thinkingDelta = (index: number, thinking: string): MessageStreamEvent => ({
  type: 'content_block_delta',
  index,
  delta: { type: 'thinking_delta', thinking },
});
const stop = (index: number): MessageStreamEvent => ({ type: 'content_block_stop', index });
const toolBlock = (
  index: number,
  id: string,
  name: string,
  json: string | undefined,
): MessageStreamEvent[] => [
  { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } },
  ...(json === undefined
    ? []
    : [
        {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: json },
        } as const,
      ]),
  stop(index),
];

describe('ResponsesStreamTranslator: the stream around the items', () => {
  it('starts with message_start carrying the input estimate, once', () => {
    const translator = new ResponsesStreamTranslator(context({ inputTokensEstimate: 42 }));
    const [start] = translator.start();
    expect(start).toStrictEqual({
      type: 'message_start',
      message: {
        id: 'msg_gen1',
        type: 'message',
        role: 'assistant',
        model: 'claude-test',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: 42,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 0,
        },
      },
    });
    expect(translator.start()).toStrictEqual([]);
  });

  it('sends message_start before the first translated event when start was not called', () => {
    const translator = new ResponsesStreamTranslator(context());
    const out = translator.push(loose({ type: 'response.created', response: {} }));
    expect(out.map((event) => event.type)).toStrictEqual(['message_start']);
  });

  it('is finished after the terminal event only, refusing anything after it', () => {
    const translator = new ResponsesStreamTranslator(context());
    translator.start();
    expect(translator.isFinished).toBe(false);
    translator.push(loose(completed()));
    expect(translator.isFinished).toBe(true);
    expect(translator.end()).toStrictEqual([]);
    let error: unknown;
    try {
      translator.push(loose({ type: 'response.output_text.delta', delta: 'late' }));
    } catch (caught) {
      error = caught;
    }
    expect(isTransportError(error) && [error.code, error.message]).toStrictEqual([
      'MODEL_EPROTO',
      'unintelligible upstream answer: an event arrived after the end of the stream',
    ]);
  });

  it('fails a stream that ends without a terminal event', () => {
    const { error } = translate([{ type: 'response.output_text.delta', item_id: 'm', delta: 'Hi' }]);
    expect([error?.code, error?.message]).toStrictEqual([
      'MODEL_EPROTO',
      'unintelligible upstream answer: stream ended before the model finished (no response.completed, ' +
        'response.incomplete or response.failed event)',
    ]);
  });

  it('refuses an event that is not an object, and an item done event without an item', () => {
    expect(translate([loose('data')]).error?.message).toBe(
      'unintelligible upstream answer: a stream event is not a JSON object',
    );
    expect(translate([{ type: 'response.output_item.done', output_index: 0 }]).error?.message).toBe(
      'unintelligible upstream answer: a response.output_item.done event has no item',
    );
  });

  it('takes the status from the terminal event when its response has none', () => {
    expect(
      translate([{ type: 'response.incomplete', response: { usage: { output_tokens: 3 } } }]).events,
    ).toStrictEqual(end('max_tokens', { input_tokens: 0, output_tokens: 3 }));
    expect(translate([{ type: 'response.completed' }]).events).toStrictEqual(
      end('end_turn', { input_tokens: 0, output_tokens: 0 }),
    );
    expect(
      translate([{ type: 'response.failed', response: { error: { code: 'server_error', message: 'x' } } }])
        .error?.status,
    ).toBe(500);
  });

  it('fails the stream with the upstream error of an error event', () => {
    const { error } = translate([{ type: 'error', code: 'insufficient_quota', message: 'quota' }]);
    expect([error?.status, error?.body.error.type, error?.retryable]).toStrictEqual([
      402,
      'billing_error',
      false,
    ]);
  });
});

describe('ResponsesStreamTranslator: text', () => {
  it('streams text and refusal deltas into one text block per message item, closing it when the item is done', () => {
    const { events } = translate([
      { type: 'response.output_item.added', output_index: 0, item: { type: 'message', id: 'm1' } },
      { type: 'response.output_text.delta', item_id: 'm1', delta: 'I ' },
      { type: 'response.output_text.delta', item_id: 'm1', delta: '' },
      { type: 'response.refusal.delta', item_id: 'm1', delta: 'cannot.' },
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: {
          type: 'message',
          id: 'm1',
          content: [
            { type: 'output_text', text: 'I ' },
            { type: 'refusal', refusal: 'cannot.' },
          ],
        },
      },
      completed(),
    ]);
    expect(events).toStrictEqual([
      textStart(0),
      textDelta(0, 'I '),
      textDelta(0, 'cannot.'),
      stop(0),
      ...end('refusal'),
    ]);
  });

  it('stops for a refusal streamed as refusal deltas, even when no finished item repeats it', () => {
    const { events } = translate([
      { type: 'response.refusal.delta', item_id: 'm1', delta: 'No.' },
      completed(),
    ]);
    expect(events).toStrictEqual([textStart(0), textDelta(0, 'No.'), stop(0), ...end('refusal')]);
  });

  it('adds the text a finished message holds beyond what was streamed, and nothing when it differs', () => {
    const { events } = translate([
      { type: 'response.output_text.delta', item_id: 'm1', delta: 'Hel' },
      {
        type: 'response.output_item.done',
        item: { type: 'message', id: 'm1', content: [{ type: 'output_text', text: 'Hello' }] },
      },
      { type: 'response.output_text.delta', item_id: 'm2', delta: 'abc' },
      {
        type: 'response.output_item.done',
        item: { type: 'message', id: 'm2', content: [{ type: 'output_text', text: 'xyz and more' }] },
      },
      completed(),
    ]);
    expect(events).toStrictEqual([
      textStart(0),
      textDelta(0, 'Hel'),
      textDelta(0, 'lo'),
      stop(0),
      textStart(1),
      textDelta(1, 'abc'),
      stop(1),
      ...end('end_turn'),
    ]);
  });

  it('notes a refusal a finished message holds though it was streamed as text', () => {
    const { events } = translate([
      {
        type: 'response.output_item.done',
        item: { type: 'message', id: 'm1', content: [{ type: 'refusal', refusal: 'No.' }] },
      },
      completed(),
    ]);
    expect(events).toStrictEqual([textStart(0), textDelta(0, 'No.'), stop(0), ...end('refusal')]);
  });

  it('sends deltas without an item id or index to the latest item, and ignores deltas that are not text', () => {
    const { events } = translate([
      { type: 'response.output_item.added', item: { type: 'message' } },
      { type: 'response.output_text.delta', delta: 'a' },
      { type: 'response.output_text.delta', delta: 5 },
      { type: 'response.output_item.added', item: { type: 'message' } },
      { type: 'response.output_text.delta', delta: 'b' },
      completed(),
    ]);
    expect(events).toStrictEqual([
      textStart(0),
      textDelta(0, 'a'),
      stop(0),
      textStart(1),
      textDelta(1, 'b'),
      stop(1),
      ...end('end_turn'),
    ]);
  });

  it('keys items by output index when they have no id', () => {
    const { events } = translate([
      { type: 'response.output_text.delta', output_index: 0, delta: 'a' },
      { type: 'response.output_text.delta', output_index: 1, delta: 'b' },
      { type: 'response.output_text.delta', output_index: 0, delta: 'c' },
      completed(),
    ]);
    expect(events).toStrictEqual([
      textStart(0),
      textDelta(0, 'a'),
      stop(0),
      textStart(1),
      textDelta(1, 'b'),
      stop(1),
      textStart(2),
      textDelta(2, 'c'),
      stop(2),
      ...end('end_turn'),
    ]);
  });

  it('creates an item for a first delta without id or index', () => {
    const { events } = translate([{ type: 'response.output_text.delta', delta: 'hi' }, completed()]);
    expect(events).toStrictEqual([textStart(0), textDelta(0, 'hi'), stop(0), ...end('end_turn')]);
  });
});

describe('ResponsesStreamTranslator: reasoning', () => {
  it('separates summary parts by a blank line, and signs the block when the item is done', () => {
    const signature = encodeReasoningSignature({ id: 'rs_1', encryptedContent: 'enc', source: 'summary' });
    const { events } = translate([
      { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', summary_index: 0, delta: 'one' },
      { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', summary_index: 0, delta: '!' },
      { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', summary_index: 1, delta: 'two' },
      { type: 'response.reasoning_text.delta', item_id: 'rs_1', content_index: 0, delta: 'ignored' },
      {
        type: 'response.output_item.done',
        item: {
          type: 'reasoning',
          id: 'rs_1',
          encrypted_content: 'enc',
          summary: [
            { type: 'summary_text', text: 'one!' },
            { type: 'summary_text', text: 'two' },
          ],
        },
      },
      completed(),
    ]);
    expect(events).toStrictEqual([
      thinkingStart(0),
      thinkingDelta(0, 'one'),
      thinkingDelta(0, '!'),
      thinkingDelta(0, '\n\ntwo'),
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature } },
      stop(0),
      ...end('end_turn'),
    ]);
  });

  it('streams reasoning text by content part, and signs it as content', () => {
    const signature = encodeReasoningSignature({
      id: 'rs_1',
      encryptedContent: undefined,
      source: 'content',
    });
    const { events } = translate([
      { type: 'response.reasoning_text.delta', item_id: 'rs_1', delta: 'a' },
      { type: 'response.reasoning_text.delta', item_id: 'rs_1', content_index: 1, delta: 'b' },
      { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', delta: 'ignored' },
      {
        type: 'response.output_item.done',
        item: {
          type: 'reasoning',
          id: 'rs_1',
          content: [
            { type: 'reasoning_text', text: 'a' },
            { type: 'reasoning_text', text: 'b' },
          ],
        },
      },
      completed(),
    ]);
    expect(events).toStrictEqual([
      thinkingStart(0),
      thinkingDelta(0, 'a'),
      thinkingDelta(0, '\n\nb'),
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature } },
      stop(0),
      ...end('end_turn'),
    ]);
  });

  it('sends the reasoning of an item that arrives only done, and a blank signed block for one with only a signature', () => {
    const signature = encodeReasoningSignature({ id: undefined, encryptedContent: 'enc', source: 'summary' });
    const { events } = translate([
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: { type: 'reasoning', summary: [{ type: 'summary_text', text: 'why' }] },
      },
      {
        type: 'response.output_item.done',
        output_index: 1,
        item: { type: 'reasoning', encrypted_content: 'enc' },
      },
      completed(),
    ]);
    expect(events).toStrictEqual([
      thinkingStart(0),
      thinkingDelta(0, 'why'),
      stop(0),
      thinkingStart(1),
      { type: 'content_block_delta', index: 1, delta: { type: 'signature_delta', signature } },
      stop(1),
      ...end('end_turn'),
    ]);
  });

  it('adds nothing to reasoning streamed as one kind when the finished item holds the other', () => {
    const { events } = translate([
      { type: 'response.reasoning_text.delta', item_id: 'rs_1', delta: 'raw' },
      {
        type: 'response.output_item.done',
        item: { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'summary' }] },
      },
      completed(),
    ]);
    const signature = encodeReasoningSignature({
      id: 'rs_1',
      encryptedContent: undefined,
      source: 'content',
    });
    expect(events).toStrictEqual([
      thinkingStart(0),
      thinkingDelta(0, 'raw'),
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature } },
      stop(0),
      ...end('end_turn'),
    ]);
  });
});

describe('ResponsesStreamTranslator: function calls', () => {
  it('sends a call whole at its done event, from its argument deltas', () => {
    const { events } = translate([
      { type: 'response.output_text.delta', item_id: 'm1', delta: 'Checking.' },
      {
        type: 'response.output_item.added',
        output_index: 1,
        item: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '' },
      },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_1', delta: '{"city":' },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_1', delta: '' },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_1', delta: '"Paris"}' },
      { type: 'response.output_item.done', output_index: 1, item: { type: 'function_call', id: 'fc_1' } },
      completed(),
    ]);
    expect(events).toStrictEqual([
      textStart(0),
      textDelta(0, 'Checking.'),
      stop(0),
      ...toolBlock(1, 'call_1', 'caller_get_weather', '{"city":"Paris"}'),
      ...end('tool_use'),
    ]);
  });

  it('takes the arguments of the done events over the deltas, also given as an object', () => {
    const { events } = translate([
      {
        type: 'response.output_item.added',
        item: { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'f' },
      },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_1', delta: '{"partial"' },
      { type: 'response.function_call_arguments.done', item_id: 'fc_1', arguments: '{"a":1}' },
      { type: 'response.output_item.done', item: { type: 'function_call', id: 'fc_1' } },
      {
        type: 'response.output_item.added',
        item: { type: 'function_call', id: 'fc_2', call_id: 'c2', name: 'g' },
      },
      { type: 'response.output_item.done', item: { type: 'function_call', id: 'fc_2', arguments: { b: 2 } } },
      completed(),
    ]);
    expect(events).toStrictEqual([
      ...toolBlock(0, 'c1', 'caller_f', '{"a":1}'),
      ...toolBlock(1, 'c2', 'caller_g', '{"b":2}'),
      ...end('tool_use'),
    ]);
  });

  it('takes whole arguments announced with the item, and sends no input delta for empty arguments', () => {
    const { events } = translate([
      {
        type: 'response.output_item.added',
        item: { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'f', arguments: '{"x":true}' },
      },
      { type: 'response.output_item.done', item: { type: 'function_call', id: 'fc_1' } },
      {
        type: 'response.output_item.added',
        item: { type: 'function_call', id: 'fc_2', call_id: 'c2', name: 'g', arguments: '' },
      },
      { type: 'response.output_item.done', item: { type: 'function_call', id: 'fc_2', arguments: null } },
      completed(),
    ]);
    expect(events).toStrictEqual([
      ...toolBlock(0, 'c1', 'caller_f', '{"x":true}'),
      ...toolBlock(1, 'c2', 'caller_g', undefined),
      ...end('tool_use'),
    ]);
  });

  it('takes a call whose argument deltas came without an added event as a function call', () => {
    const { events } = translate([
      { type: 'response.function_call_arguments.delta', item_id: 'fc_1', delta: '{}' },
      {
        type: 'response.output_item.done',
        item: { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'f' },
      },
      completed(),
    ]);
    expect(events).toStrictEqual([...toolBlock(0, 'c1', 'caller_f', '{}'), ...end('tool_use')]);
  });

  it('gives a repeated call id its next occurrence, and a call without an id a fresh one', () => {
    const call = (id: string, callId?: string) => ({
      type: 'response.output_item.done',
      item: {
        type: 'function_call',
        id,
        ...(callId === undefined ? {} : { call_id: callId }),
        name: 'f',
        arguments: '{}',
      },
    });
    const { events } = translate([call('fc_1', 'dup'), call('fc_2', 'dup'), call('fc_3'), completed()]);
    const ids = events.flatMap((event) =>
      event.type === 'content_block_start' && event.content_block.type === 'tool_use'
        ? [event.content_block.id]
        : [],
    );
    expect(ids).toStrictEqual(['dup', encodeToolId('dup', 2, () => 'unused'), 'tpx_ggen2']);
  });

  it('sends a call the stream never finished from the terminal response, in output order', () => {
    const { events } = translate([
      {
        type: 'response.output_item.added',
        output_index: 0,
        item: { type: 'function_call', call_id: 'c1', name: 'f' },
      },
      { type: 'response.function_call_arguments.delta', output_index: 0, delta: '{"a":1}' },
      completed({
        output: [null, { type: 'message', content: [{ type: 'output_text', text: 'after' }] }],
      }),
    ]);
    expect(events).toStrictEqual([
      textStart(0),
      textDelta(0, 'after'),
      stop(0),
      ...toolBlock(1, 'c1', 'caller_f', '{"a":1}'),
      ...end('tool_use'),
    ]);
  });

  it('completes a held call of a response the output limit cut, and fails one of a finished response', () => {
    const cutCall = [
      {
        type: 'response.output_item.added',
        item: { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'f' },
      },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_1', delta: '{"city":"Par' },
      { type: 'response.output_item.done', item: { type: 'function_call', id: 'fc_1' } },
    ];
    const cut = translate([
      ...cutCall,
      { type: 'response.incomplete', response: { incomplete_details: { reason: 'max_output_tokens' } } },
    ]);
    expect(cut.events).toStrictEqual([
      ...toolBlock(0, 'c1', 'caller_f', '{"city":"Par"}'),
      ...end('max_tokens', { input_tokens: 0, output_tokens: 0 }),
    ]);
    const finished = translate([...cutCall, completed()]);
    expect(finished.error?.code).toBe('MODEL_EPROTO');
    expect(finished.error?.message).toContain('tool call #0 (name "f", id "c1")');
  });

  it('reads a completed response at the output limit as cut', () => {
    const { events } = translate(
      [
        {
          type: 'response.output_item.added',
          item: { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'f' },
        },
        { type: 'response.function_call_arguments.delta', item_id: 'fc_1', delta: '{"a":[1' },
        completed({ usage: { input_tokens: 10, output_tokens: 20 } }),
      ],
      { maxOutputTokens: 20 },
    );
    expect(events).toStrictEqual([
      ...toolBlock(0, 'c1', 'caller_f', '{"a":[1]}'),
      ...end('max_tokens', { input_tokens: 10, output_tokens: 20 }),
    ]);
  });

  it('ignores a second done event for an item, and items of types it does not know', () => {
    const done = {
      type: 'response.output_item.done',
      item: { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'f', arguments: '{}' },
    };
    const { events } = translate([
      done,
      done,
      { type: 'response.output_item.done', item: { type: 'web_search_call', id: 'ws_1' } },
      { type: 'response.content_part.added', item_id: 'm1' },
      completed(),
    ]);
    expect(events).toStrictEqual([...toolBlock(0, 'c1', 'caller_f', '{}'), ...end('tool_use')]);
  });
});

describe('ResponsesStreamTranslator: items out of the usual order', () => {
  it('ignores an added event without an item', () => {
    const { events, error } = translate([
      { type: 'response.output_item.added' },
      { type: 'response.output_text.delta', item_id: 'm1', delta: 'hi' },
      completed(),
    ]);
    expect(error).toBeUndefined();
    expect(events).toStrictEqual([textStart(0), textDelta(0, 'hi'), stop(0), ...end('end_turn')]);
  });

  it('sends every delta without an item id or index to the one item they started', () => {
    const { events } = translate([
      { type: 'response.output_text.delta', delta: 'a' },
      { type: 'response.output_text.delta', delta: 'b' },
      completed(),
    ]);
    expect(events).toStrictEqual([
      textStart(0),
      textDelta(0, 'a'),
      textDelta(0, 'b'),
      stop(0),
      ...end('end_turn'),
    ]);
  });

  it('closes an item’s block in the events of its done event', () => {
    const translator = new ResponsesStreamTranslator(context());
    translator.start();
    expect(
      translator.push(loose({ type: 'response.output_text.delta', item_id: 'm1', delta: 'hi' })),
    ).toStrictEqual([textStart(0), textDelta(0, 'hi')]);
    expect(
      translator.push(
        loose({
          type: 'response.output_item.done',
          item: { type: 'message', id: 'm1', content: [{ type: 'output_text', text: 'hi' }] },
        }),
      ),
    ).toStrictEqual([stop(0)]);
    expect(
      translator.push(loose({ type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', delta: 'x' })),
    ).toStrictEqual([thinkingStart(1), thinkingDelta(1, 'x')]);
    expect(
      translator.push(
        loose({
          type: 'response.output_item.done',
          item: { type: 'reasoning', summary: [{ type: 'summary_text', text: 'x' }] },
          item_id: 'rs_1',
        }),
      ),
    ).toStrictEqual([stop(1)]);
  });

  it('leaves another item’s block open when an item without text is done', () => {
    const { events } = translate([
      { type: 'response.output_text.delta', item_id: 'm2', delta: 'a' },
      { type: 'response.output_item.done', item: { type: 'message', id: 'm1', content: [] } },
      { type: 'response.output_item.done', item_id: 'rs_1', item: { type: 'reasoning', summary: [] } },
      { type: 'response.output_text.delta', item_id: 'm2', delta: 'b' },
      completed(),
    ]);
    expect(events).toStrictEqual([
      textStart(0),
      textDelta(0, 'a'),
      textDelta(0, 'b'),
      stop(0),
      ...end('end_turn'),
    ]);
  });

  it('adds the rest of a message streamed in several deltas, and of reasoning streamed in several', () => {
    const { events } = translate([
      { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', delta: 'Th' },
      { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', delta: 'ink' },
      {
        type: 'response.output_item.done',
        item: { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Think hard' }] },
        item_id: 'rs_1',
      },
      { type: 'response.output_text.delta', item_id: 'm1', delta: 'Hel' },
      { type: 'response.output_text.delta', item_id: 'm1', delta: 'lo' },
      {
        type: 'response.output_item.done',
        item: { type: 'message', id: 'm1', content: [{ type: 'output_text', text: 'Hello world' }] },
      },
      completed(),
    ]);
    expect(events).toStrictEqual([
      thinkingStart(0),
      thinkingDelta(0, 'Th'),
      thinkingDelta(0, 'ink'),
      thinkingDelta(0, ' hard'),
      stop(0),
      textStart(1),
      textDelta(1, 'Hel'),
      textDelta(1, 'lo'),
      textDelta(1, ' world'),
      stop(1),
      ...end('end_turn'),
    ]);
  });

  it('adds the rest of reasoning text streamed as content, and nothing of the other kind even when it extends it', () => {
    const { events } = translate([
      { type: 'response.reasoning_text.delta', item_id: 'rs_1', delta: 'Th' },
      {
        type: 'response.output_item.done',
        item: { type: 'reasoning', content: [{ type: 'reasoning_text', text: 'Think' }] },
        item_id: 'rs_1',
      },
      { type: 'response.reasoning_summary_text.delta', item_id: 'rs_2', delta: 'Th' },
      {
        type: 'response.output_item.done',
        item: { type: 'reasoning', content: [{ type: 'reasoning_text', text: 'Think' }] },
        item_id: 'rs_2',
      },
      completed(),
    ]);
    expect(events).toStrictEqual([
      thinkingStart(0),
      thinkingDelta(0, 'Th'),
      thinkingDelta(0, 'ink'),
      stop(0),
      thinkingStart(1),
      thinkingDelta(1, 'Th'),
      stop(1),
      ...end('end_turn'),
    ]);
  });

  it('opens no thinking block for a reasoning delta without text', () => {
    const { events } = translate([
      { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', delta: '' },
      { type: 'response.reasoning_text.delta', item_id: 'rs_1', delta: 7 },
      completed(),
    ]);
    expect(events).toStrictEqual(end('end_turn'));
  });

  it('reads an item that streamed text as a message, and one that streamed reasoning as reasoning, when their done item has no type', () => {
    const { events } = translate([
      { type: 'response.output_text.delta', item_id: 'm1', delta: 'Hel' },
      {
        type: 'response.output_item.done',
        item_id: 'm1',
        item: { content: [{ type: 'output_text', text: 'Hello' }] },
      },
      { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', delta: 'Th' },
      {
        type: 'response.output_item.done',
        item_id: 'rs_1',
        item: { summary: [{ type: 'summary_text', text: 'Think' }] },
      },
      completed(),
    ]);
    expect(events).toStrictEqual([
      textStart(0),
      textDelta(0, 'Hel'),
      textDelta(0, 'lo'),
      stop(0),
      thinkingStart(1),
      thinkingDelta(1, 'Th'),
      thinkingDelta(1, 'ink'),
      stop(1),
      ...end('end_turn'),
    ]);
  });

  it('matches the terminal response’s items without ids to the stream’s items by output index', () => {
    const { events } = translate([
      { type: 'response.output_text.delta', output_index: 0, delta: 'Hel' },
      completed({ output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hello' }] }] }),
    ]);
    expect(events).toStrictEqual([
      textStart(0),
      textDelta(0, 'Hel'),
      textDelta(0, 'lo'),
      stop(0),
      ...end('end_turn'),
    ]);
  });

  it('reports the cache reads and writes of the terminal usage', () => {
    const { events } = translate([
      completed({
        usage: {
          input_tokens: 100,
          output_tokens: 5,
          input_tokens_details: { cached_tokens: 30, cache_write_tokens: 20 },
        },
      }),
    ]);
    expect(events).toStrictEqual([
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: {
          input_tokens: 50,
          output_tokens: 5,
          cache_creation_input_tokens: 20,
          cache_read_input_tokens: 30,
        },
      },
      { type: 'message_stop' },
    ]);
  });
});

describe('ResponsesStreamTranslator: function call arguments from several events', () => {
  const added = (item: Record<string, unknown>) => ({
    type: 'response.output_item.added',
    item: { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'f', ...item },
  });
  const delta = (text: unknown) => ({
    type: 'response.function_call_arguments.delta',
    item_id: 'fc_1',
    delta: text,
  });
  const done = { type: 'response.output_item.done', item: { type: 'function_call', id: 'fc_1' } };

  it('keeps the argument deltas when the item is announced after them with its whole arguments', () => {
    const { events } = translate([
      delta('{"a":'),
      delta('1}'),
      added({ arguments: '{"a":1}' }),
      done,
      completed(),
    ]);
    expect(events).toStrictEqual([...toolBlock(0, 'c1', 'caller_f', '{"a":1}'), ...end('tool_use')]);
  });

  it('takes the arguments announced with the item after an empty argument delta', () => {
    const { events } = translate([delta(''), added({ arguments: '{"a":1}' }), done, completed()]);
    expect(events).toStrictEqual([...toolBlock(0, 'c1', 'caller_f', '{"a":1}'), ...end('tool_use')]);
  });

  it('ignores arguments announced with the item that are not a string', () => {
    const { events } = translate([added({ arguments: { a: 1 } }), delta('{"b":2}'), done, completed()]);
    expect(events).toStrictEqual([...toolBlock(0, 'c1', 'caller_f', '{"b":2}'), ...end('tool_use')]);
  });

  it('ignores an arguments done event whose arguments are not a string', () => {
    const { events } = translate([
      added({}),
      delta('{"b":2}'),
      { type: 'response.function_call_arguments.done', item_id: 'fc_1', arguments: 5 },
      done,
      completed(),
    ]);
    expect(events).toStrictEqual([...toolBlock(0, 'c1', 'caller_f', '{"b":2}'), ...end('tool_use')]);
  });

  it('fails at the end for argument deltas of an item never announced nor finished, naming the call by its position', () => {
    const { events, error } = translate([delta('{}'), completed()]);
    expect(events).toStrictEqual([]);
    expect(error?.code).toBe('MODEL_EPROTO');
    expect(error?.message).toBe(
      'unintelligible upstream answer: tool call #0 (no name, no id) has no function name',
    );
  });

  it('numbers calls among the calls only, for the position its error names', () => {
    const { error } = translate([
      { type: 'response.output_item.added', item: { type: 'message', id: 'm1' } },
      {
        type: 'response.output_item.added',
        item: { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'f' },
      },
      { type: 'response.output_item.done', item: { type: 'function_call', id: 'fc_1', arguments: '{}' } },
      {
        type: 'response.output_item.added',
        item: { type: 'function_call', id: 'fc_2', call_id: 'c2', name: 'g' },
      },
      { type: 'response.output_item.done', item: { type: 'function_call', id: 'fc_2', arguments: '[1]' } },
      completed(),
    ]);
    expect(error?.message).toBe(
      'unintelligible upstream answer: tool call #1 (name "g", id "c2") has arguments that are an array, not a JSON object: "[1]"',
    );
  });
});
