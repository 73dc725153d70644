import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { completeCutJson } from './complete-cut-json.js';

function completed(text: string): unknown {
  const suffix = completeCutJson(text);
  if (suffix === undefined) throw new Error(`no completion for ${JSON.stringify(text)}`);
  return JSON.parse(text + suffix);
}

describe('completeCutJson', () => {
  it('closes an object cut right after its opening brace (what llama.cpp cuts a second call to)', () => {
    expect(completeCutJson('{')).toBe('}');
    expect(completed('{')).toEqual({});
  });

  it('closes a cut string value where it stands', () => {
    expect(completed('{"city":"Par')).toEqual({ city: 'Par' });
  });

  it('gives a cut key, or a key without its value, the value null', () => {
    expect(completed('{"city":"Paris","un')).toEqual({ city: 'Paris', un: null });
    expect(completed('{"city":"Paris","unit"')).toEqual({ city: 'Paris', unit: null });
    expect(completed('{"city":')).toEqual({ city: null });
  });

  it('adds an empty-named member after a dangling comma, the only append-only repair', () => {
    expect(completed('{"a":1,')).toEqual({ a: 1, '': null });
  });

  it('finishes cut literals, numbers and escapes, and closes nested containers', () => {
    expect(completed('{"a":[1,tr')).toEqual({ a: [1, true] });
    expect(completed('{"a":{"b":nu')).toEqual({ a: { b: null } });
    expect(completed('{"a":-')).toEqual({ a: -0 });
    expect(completed('{"a":1.')).toEqual({ a: 1 });
    expect(completed('{"a":2e')).toEqual({ a: 2 });
    expect(completed('{"a":"x\\')).toEqual({ a: 'x\\' });
    expect(completed('{"a":"\\u00e')).toEqual({ a: '\u00e0' });
    expect(completed('{"a":[')).toEqual({ a: [] });
    expect(completed('{"a":[1,')).toEqual({ a: [1, null] });
  });

  it('adds nothing to a complete object, even with whitespace around it', () => {
    expect(completeCutJson('{"a":1}')).toBe('');
    expect(completeCutJson(' { } \n')).toBe('');
  });

  it('refuses text that is not the beginning of a JSON object', () => {
    for (const text of [
      '',
      '  ',
      '[1,',
      '"x',
      'abc',
      '{"a":1}}',
      '{"a":1} x',
      '{a',
      '{"a" 1',
      '{"a":1x',
      '{"a":tx',
    ])
      expect(completeCutJson(text)).toBeUndefined();
  });

  it('completes every cut of any JSON object, pretty or compact, into an object', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }),
        fc.constantFrom(0, 2),
        fc.nat(),
        (value, indent, at) => {
          const text = JSON.stringify(value, null, indent);
          const prefix = text.slice(0, 1 + (at % text.length));
          const result = completed(prefix);
          expect(typeof result === 'object' && result !== null && !Array.isArray(result)).toBe(true);
          if (prefix === text) expect(result).toEqual(JSON.parse(text));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('keeps every member written whole before the cut, unchanged', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 3 })), {
          selector: ([key]) => key,
          maxLength: 5,
        }),
        fc.nat(),
        (entries, at) => {
          const members = entries.map(([key, member]) => `${JSON.stringify(key)}:${JSON.stringify(member)}`);
          const text = `{${members.join(',')}}`;
          const cutAt = 1 + (at % text.length);
          const result = completed(text.slice(0, cutAt)) as Record<string, unknown>;
          let end = 1;
          entries.forEach(([key, member], index) => {
            end += members[index]!.length;
            if (end <= cutAt) expect(result[key]).toEqual(JSON.parse(JSON.stringify(member)));
            end += 1;
          });
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('completeCutJson: escapes, scalars and what follows the object', () => {
  it('takes every JSON escape, and a whole \\u escape followed by more members', () => {
    expect(completed('{"a":"x\\n')).toStrictEqual({ a: 'x\n' });
    expect(completed('{"a":"\\"\\\\\\/\\b\\f\\r\\t')).toStrictEqual({ a: '"\\/\b\f\r\t' });
    expect(completed('{"a":"\\u00e9","b":1')).toStrictEqual({ a: 'é', b: 1 });
    expect(completed('{"\\u00e9":1,"b')).toStrictEqual({ é: 1, b: null });
  });

  it('refuses an escape JSON does not have, and a \\u escape with a character that is not hex', () => {
    expect(completeCutJson('{"a":"\\x')).toBeUndefined();
    expect(completeCutJson('{"a":"\\u00g')).toBeUndefined();
  });

  it('refuses a scalar that is not a whole literal or number once something follows it', () => {
    expect(completeCutJson('{"a":tx,')).toBeUndefined();
    expect(completeCutJson('{"a":1.2.3}')).toBeUndefined();
    expect(completeCutJson('{"a":nul }')).toBeUndefined();
  });

  it('refuses anything after the object is closed, and any start but an opening brace', () => {
    expect(completeCutJson('{"a":1},')).toBeUndefined();
    expect(completeCutJson('{}{')).toBeUndefined();
    expect(completeCutJson('[')).toBeUndefined();
    expect(completeCutJson('x')).toBeUndefined();
  });

  it('refuses a closing bracket that does not match the open container, and anything but a comma or a close after a value', () => {
    expect(completeCutJson('{"a":1]')).toBeUndefined();
    expect(completeCutJson('{"a":[1}')).toBeUndefined();
    expect(completeCutJson('{"a":1 x')).toBeUndefined();
    expect(completeCutJson('{"a":[1 x')).toBeUndefined();
    expect(completeCutJson('{"a":[1]}')).toBe('');
  });

  it('refuses a close right after a comma, a string after the closed object, and a value that starts with no value character', () => {
    expect(completeCutJson('{"a":1,}')).toBeUndefined();
    expect(completeCutJson('{"a":[1,]}')).toBeUndefined();
    expect(completeCutJson('{}"a')).toBeUndefined();
    expect(completeCutJson('{"a":x')).toBeUndefined();
    expect(completeCutJson('{"a":}')).toBeUndefined();
  });

  it('pads a \\u escape cut after one hex digit with three zeros', () => {
    expect(completeCutJson('{"a":"\\u0')).toBe('000"}');
    expect(completed('{"a":"\\u0')).toStrictEqual({ a: '\u0000' });
  });
});
