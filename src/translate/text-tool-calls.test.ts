import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cutAtRandom } from '../../test/helpers/stream-laws.js';
import { readTextToolCalls, TextToolCallScanner, type TextWithCalls } from './text-tool-calls.js';

const OFFERED = new Set(['get_weather', 'read_file']);

/** What a scanner fed `pieces` delivers: the text it let out, piece by piece and at the end, and the calls. */
function scan(pieces: readonly string[]): TextWithCalls & { released: string[] } {
  const scanner = new TextToolCallScanner(OFFERED);
  const released = pieces.map((piece) => scanner.push(piece));
  const end = scanner.end();
  return { text: released.join('') + end.text, calls: end.calls, released };
}

describe('readTextToolCalls', () => {
  it('reads Hermes calls, one or several, with the text before them kept', () => {
    const text =
      'Let me look.\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n' +
      '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>';
    expect(readTextToolCalls(text, OFFERED)).toEqual({
      text: 'Let me look.',
      calls: [
        { name: 'get_weather', input: { city: 'Paris' } },
        { name: 'read_file', input: { path: 'a.txt' } },
      ],
    });
  });

  it('reads a last Hermes call whose closing tag never came', () => {
    const text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}';
    expect(readTextToolCalls(text, OFFERED).calls).toEqual([
      { name: 'get_weather', input: { city: 'Oslo' } },
    ]);
  });

  it('reads both Mistral forms', () => {
    expect(
      readTextToolCalls('[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "b"}}]', OFFERED),
    ).toEqual({ text: '', calls: [{ name: 'read_file', input: { path: 'b' } }] });
    expect(
      readTextToolCalls('[TOOL_CALLS]read_file[ARGS]{"path": "c"}[TOOL_CALLS]get_weather[ARGS]{}', OFFERED),
    ).toEqual({
      text: '',
      calls: [
        { name: 'read_file', input: { path: 'c' } },
        { name: 'get_weather', input: {} },
      ],
    });
  });

  it('reads a bare JSON call as the whole answer, with parameters or arguments, after <|python_tag|>', () => {
    expect(
      readTextToolCalls(' {"name": "get_weather", "parameters": {"city": "Rome"}}\n', OFFERED).calls,
    ).toEqual([{ name: 'get_weather', input: { city: 'Rome' } }]);
    expect(
      readTextToolCalls('<|python_tag|>{"name": "read_file", "arguments": "{\\"path\\": \\"d\\"}"}', OFFERED)
        .calls,
    ).toEqual([{ name: 'read_file', input: { path: 'd' } }]);
  });

  it('repairs a call written with single quotes and a trailing comma', () => {
    const text = "<tool_call>{'name': 'get_weather', 'arguments': {'city': 'Lima',}}</tool_call>";
    expect(readTextToolCalls(text, OFFERED).calls).toEqual([
      { name: 'get_weather', input: { city: 'Lima' } },
    ]);
  });

  it('leaves text alone: a tool not offered, prose after a call, a bare object that is no call, a broken call', () => {
    for (const text of [
      '<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>',
      'For example: <tool_call>{"name": "get_weather", "arguments": {}}</tool_call> would ask for the weather.',
      '{"city": "Paris", "temperature": 21}',
      '{"name": "get_weather", "arguments": {"city": "Paris"}} is how a call looks',
      '<tool_call>{"name": "get_weather", "arguments": {"city": </tool_call>',
      '<tool_call>{"name": "get_weather", "arguments": [1, 2]}</tool_call>',
      'plain text without any call',
    ]) {
      expect(readTextToolCalls(text, OFFERED)).toEqual({ text, calls: [] });
    }
  });
});

describe('TextToolCallScanner', () => {
  it('lets ordinary text out at once, holding only trailing white space and a possible marker', () => {
    const scanner = new TextToolCallScanner(OFFERED);
    expect(scanner.push('Hello there')).toBe('Hello there');
    expect(scanner.push(', friend. ')).toBe(', friend.');
    expect(scanner.push('See <b>this</b> and [1]')).toBe(' See <b>this</b> and [1]');
    expect(scanner.push(' then <tool_')).toBe(' then');
    expect(scanner.push('tip> more')).toBe(' <tool_tip> more');
  });

  it('holds a call until the end, and lets text out as soon as the call is ruled out', () => {
    const scanner = new TextToolCallScanner(OFFERED);
    expect(scanner.push('Sure.\n<tool_call>{"name": "get_weather"')).toBe('Sure.');
    expect(scanner.push(', "arguments": {}}</tool_call>')).toBe('');
    expect(scanner.push(' and that is how.')).toBe(
      '\n<tool_call>{"name": "get_weather", "arguments": {}}</tool_call> and that is how.',
    );
    expect(scanner.end()).toEqual({ text: '', calls: [] });
  });

  it('ends with what readTextToolCalls reads of the whole text, however the text was cut', () => {
    const fragment = fc.constantFrom(
      '<tool_call>',
      '</tool_call>',
      '[TOOL_CALLS]',
      '[ARGS]',
      '<|python_tag|>',
      '{"name": "get_weather", "arguments": {"city": "Paris"}}',
      '{"name": "read_file", "parameters": {"path": "x"}}',
      "{'name': 'read_file', 'arguments': {'path': 'y',}}",
      '{"name": "nope", "arguments": {}}',
      '[{"name": "read_file", "arguments": {}}]',
      'read_file',
      '{"a": "}"}',
      '{',
      '}',
      '"',
      '\\',
      ' ',
      '\n',
      'text',
      '<',
      '[',
    );
    fc.assert(
      fc.property(
        fc.array(fragment, { maxLength: 12 }).map((parts) => parts.join('')),
        fc.gen(),
        (text, random) => {
          const whole = readTextToolCalls(text, OFFERED);
          const streamed = scan(cutAtRandom(text, random));
          expect({ text: streamed.text, calls: streamed.calls }).toEqual(whole);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('flush lets everything held out as text', () => {
    const scanner = new TextToolCallScanner(OFFERED);
    expect(scanner.push('<tool_call>{"name": "read_file", "arguments": {}}')).toBe('');
    expect(scanner.flush()).toBe('<tool_call>{"name": "read_file", "arguments": {}}');
    expect(scanner.end()).toEqual({ text: '', calls: [] });
  });
});
