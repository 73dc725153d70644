import { readFileSync } from 'node:fs';
import { createParser } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import { createStreamGrammar, type GrammarEvent } from './stream-grammar.js';

const FIXTURES = new URL('./__fixtures__/reference-anthropic/', import.meta.url);

/** A recorded Anthropic stream as events (`.sse` through eventsource-parser; `.chunks.jsonl` per line). */
function recordedEvents(path: string): GrammarEvent[] {
  const text = readFileSync(new URL(path, FIXTURES), 'utf8');
  const events: GrammarEvent[] = [];
  if (path.endsWith('.sse')) {
    createParser({ onEvent: (event) => events.push(JSON.parse(event.data) as GrammarEvent) }).feed(text);
  } else {
    for (const line of text.split('\n'))
      if (line.trim() !== '') events.push(JSON.parse(line) as GrammarEvent);
  }
  return events;
}

/** The first violation, or the end-of-stream verdict prefixed with "end: ". */
function check(events: readonly GrammarEvent[]): string | undefined {
  const grammar = createStreamGrammar();
  for (const event of events) {
    const violation = grammar.accept(event);
    if (violation !== undefined) return violation;
  }
  const missing = grammar.end();
  return missing === undefined ? undefined : `end: ${missing}`;
}

const start: GrammarEvent = {
  type: 'message_start',
  message: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'm',
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 0 },
  },
};
const text = (index: number): GrammarEvent => ({
  type: 'content_block_start',
  index,
  content_block: { type: 'text', text: '' },
});
const tool = (index: number): GrammarEvent => ({
  type: 'content_block_start',
  index,
  content_block: { type: 'tool_use', id: 't', name: 'f', input: {} },
});
const thinking = (index: number): GrammarEvent => ({
  type: 'content_block_start',
  index,
  content_block: { type: 'thinking', thinking: '', signature: '' },
});
const textDelta = (index: number): GrammarEvent => ({
  type: 'content_block_delta',
  index,
  delta: { type: 'text_delta', text: 'x' },
});
const jsonDelta = (index: number): GrammarEvent => ({
  type: 'content_block_delta',
  index,
  delta: { type: 'input_json_delta', partial_json: '{}' },
});
const thinkingDelta = (index: number): GrammarEvent => ({
  type: 'content_block_delta',
  index,
  delta: { type: 'thinking_delta', thinking: 'hm' },
});
const signatureDelta = (index: number): GrammarEvent => ({
  type: 'content_block_delta',
  index,
  delta: { type: 'signature_delta', signature: 'sig' },
});
const stop = (index: number): GrammarEvent => ({ type: 'content_block_stop', index });
const messageDelta: GrammarEvent = {
  type: 'message_delta',
  delta: { stop_reason: 'end_turn', stop_sequence: null },
  usage: { output_tokens: 1 },
};
const messageStop: GrammarEvent = { type: 'message_stop' };
const ping: GrammarEvent = { type: 'ping' };
const error: GrammarEvent = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };

describe('createStreamGrammar', () => {
  it.each([
    'anthropic-sdk-ts/basic-text.sse',
    'anthropic-sdk-ts/tool-use.sse',
    'vercel/sonnet-4.5.text.chunks.jsonl',
    'vercel/sonnet-4.5.tool-no-args.chunks.jsonl',
    'vercel/haiku-4.5.json-tool.chunks.jsonl',
    'vercel/sonnet-4.5.thinking.chunks.jsonl',
  ])('accepts the recorded Anthropic stream %s', (path) => {
    const events = recordedEvents(path);
    expect(events.length).toBeGreaterThan(3);
    expect(check(events)).toBeUndefined();
  });

  it('reports the recorded max_tokens stream that sends message_delta with its tool block still open', () => {
    // The SDK's own test fixture for cut-off tool JSON has no content_block_stop for the cut block;
    // A.7 requires one, and so does this checker.
    expect(check(recordedEvents('anthropic-sdk-ts/incomplete-partial-json.sse'))).toBe(
      'event #14 (message_delta): message_delta may only come after every block is closed (block 1 is open)',
    );
  });

  it('accepts pings anywhere after message_start, several message_deltas, and every block type in turn', () => {
    expect(
      check([
        start,
        ping,
        thinking(0),
        thinkingDelta(0),
        ping,
        signatureDelta(0),
        stop(0),
        ping,
        text(1),
        textDelta(1),
        {
          type: 'content_block_delta',
          index: 1,
          delta: { type: 'citations_delta', citation: { type: 'x' } },
        },
        stop(1),
        tool(2),
        jsonDelta(2),
        stop(2),
        {
          type: 'content_block_start',
          index: 3,
          content_block: { type: 'server_tool_use', id: 's', name: 'web_search', input: {} },
        },
        jsonDelta(3),
        stop(3),
        ping,
        messageDelta,
        ping,
        messageDelta,
        messageStop,
      ]),
    ).toBeUndefined();
  });

  it('accepts a message without content blocks', () => {
    expect(check([start, messageDelta, messageStop])).toBeUndefined();
  });

  it('accepts an error event in place of the tail, at any point', () => {
    expect(check([start, text(0), textDelta(0), error])).toBeUndefined();
    expect(check([start, error])).toBeUndefined();
    expect(check([error])).toBeUndefined();
    expect(check([start, text(0), stop(0), messageDelta, error])).toBeUndefined();
  });

  it('skips unknown event types and accepts unknown delta and block types', () => {
    expect(
      check([
        start,
        { type: 'future_event', x: 1 },
        { type: 'content_block_start', index: 0, content_block: { type: 'compaction' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'compaction_delta', content: 'x' } },
        stop(0),
        { type: 'future_event' },
        messageDelta,
        messageStop,
      ]),
    ).toBeUndefined();
  });

  it.each<[string, GrammarEvent[], RegExp]>([
    [
      'a stream that does not begin with message_start',
      [text(0)],
      /event #0 \(content_block_start\): the stream must begin with message_start/,
    ],
    ['a ping before message_start', [ping], /must begin with message_start/],
    ['a second message_start', [start, start], /message_start may only come first/],
    ['a block index that skips', [start, text(1)], /expected index 0, got 1/],
    ['a block index that repeats', [start, text(0), stop(0), text(0)], /expected index 1, got 0/],
    ['two blocks open at once', [start, text(0), text(1)], /a block may only start when none is open/],
    [
      'a delta for another index',
      [start, text(0), textDelta(1)],
      /block 0 is open, but the delta is for index 1/,
    ],
    ['a delta with no block open', [start, textDelta(0)], /no block is open/],
    ['a stop for another index', [start, text(0), stop(1)], /block 0 is open, but the stop is for index 1/],
    [
      'a text delta in a tool block',
      [start, tool(0), textDelta(0)],
      /a text_delta cannot extend block 0, a tool_use block/,
    ],
    [
      'an input_json_delta in a text block',
      [start, text(0), jsonDelta(0)],
      /an? input_json_delta cannot extend block 0, a text block/,
    ],
    [
      'a thinking delta in a text block',
      [start, text(0), thinkingDelta(0)],
      /thinking_delta cannot extend block 0/,
    ],
    [
      'a signature delta in a tool block',
      [start, tool(0), signatureDelta(0)],
      /signature_delta cannot extend block 0/,
    ],
    [
      'a text delta without text',
      [start, text(0), { type: 'content_block_delta', index: 0, delta: { type: 'text_delta' } }],
      /needs a string "text"/,
    ],
    ['message_delta while a block is open', [start, text(0), messageDelta], /block 0 is open/],
    ['a block after message_delta', [start, messageDelta, text(0)], /before message_delta/],
    ['message_stop without message_delta', [start, messageStop], /message_stop must follow message_delta/],
    [
      'an event after message_stop',
      [start, messageDelta, messageStop, ping],
      /no event may follow message_stop/,
    ],
    ['an event after an error', [start, error, messageStop], /no event may follow an error event/],
    [
      'an unterminated stream',
      [start, text(0), textDelta(0)],
      /^end: the stream ended without message_stop \(while block 0 \(text\) is open\)/,
    ],
    ['an empty stream', [], /^end: the stream ended without message_stop \(before message_start\)/],
    ['an event without a type', [start, { kind: 'x' } as unknown as GrammarEvent], /needs a string "type"/],
  ])('reports %s', (_name, events, pattern) => {
    expect(check(events)).toMatch(pattern);
  });

  it('numbers the offending event', () => {
    expect(check([start, ping, text(0), stop(0), stop(0)])).toMatch(
      /^event #4 \(content_block_stop\): no block is open/,
    );
  });
});
