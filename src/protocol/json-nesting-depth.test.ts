import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JSON_LONG_NUMBER, JSON_TOO_DEEP, MAX_JSON_DEPTH, scanJsonText } from './json-nesting-depth.js';

/**
 * The same question answered the slow, obvious way: every character visited, a flag for "inside a
 * string", each number token outside strings collected whole and tested with the rule of `exact-json.ts`.
 */
function referenceFlags(text: string, maxDepth: number): number {
  let flags = 0;
  let depth = 0;
  let inString = false;
  let token = '';
  const endToken = (): void => {
    if (/(?:\d\.?){16}|[eE][+-]?\d{3}/.test(token)) flags |= JSON_LONG_NUMBER;
    token = '';
  };
  for (let index = 0; index < text.length; index++) {
    const character = text[index]!;
    if (inString) {
      if (character === '\\') index++;
      else if (character === '"') inString = false;
      continue;
    }
    if (/[-+.eE0-9]/.test(character) && (token !== '' || /[-0-9]/.test(character))) {
      token += character;
      continue;
    }
    endToken();
    if (character === '"') inString = true;
    else if (character === '[' || character === '{') {
      if (++depth > maxDepth) return flags | JSON_TOO_DEEP;
    } else if (character === ']' || character === '}') depth--;
  }
  endToken();
  return flags;
}

/** JSON values whose strings are full of what the scan must not mistake for structure or numbers. */
const trickyString = fc.stringMatching(/^[\\"[\]{}0-9eE.+\- a-z]{0,40}$/);
const longNumber = fc.oneof(
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
  fc.constantFrom(
    '1e400',
    '-2.5E-308',
    '0.12345678901234567',
    '1.5e+123',
    '123456789012345.6',
    '9007199254740993',
  ),
);
const jsonText = fc
  .letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.oneof(
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
      ),
      trickyString,
      fc.dictionary(trickyString, tie('value'), { maxKeys: 4 }),
      fc.array(tie('value'), { maxLength: 4 }),
    ),
  }))
  .value.chain((value) =>
    // Splice a number a double cannot hold in place of some of the plain numbers, as a server could write.
    fc
      .tuple(fc.constant(JSON.stringify(value)), longNumber, fc.boolean())
      .map(([text, number, splice]) => (splice ? text.replace(/(?<=[:,[])-?\d[\d.eE+-]*/, number) : text)),
  );

describe('scanJsonText', () => {
  it('agrees with a character-by-character reading on any JSON text, at any depth limit', () => {
    fc.assert(
      fc.property(jsonText, fc.integer({ min: 0, max: 6 }), (text, maxDepth) => {
        expect(scanJsonText(text, maxDepth)).toBe(referenceFlags(text, maxDepth));
      }),
      { numRuns: 2000 },
    );
  });

  it('counts neither brackets nor digits inside strings, escaped quotes included', () => {
    expect(scanJsonText('{"id":"12345678901234567890","n":"1e400"}')).toBe(0);
    expect(scanJsonText('["\\"[[[", "\\\\", 12345678901234567890]', 1)).toBe(JSON_LONG_NUMBER);
    expect(scanJsonText('["a\\\\\\"[[[[", 1]', 1)).toBe(0);
    expect(scanJsonText('"[[[[" ', 0)).toBe(0);
  });

  it('flags a number outside strings that a double cannot hold, and no other', () => {
    for (const number of ['12345678901234567890', '1e400', '-1.5E-308', '0.10000000000000001']) {
      expect(scanJsonText(`{"a":[1,${number}]}`), number).toBe(JSON_LONG_NUMBER);
    }
    for (const number of ['123456789012345', '1e99', '-0.5', '9007199254740991e0'.slice(0, 15)]) {
      expect(scanJsonText(`{"a":[1,${number}]}`), number).toBe(0);
    }
  });

  it(`flags nesting deeper than ${MAX_JSON_DEPTH} levels by default, and stops there`, () => {
    expect(scanJsonText('['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH))).toBe(0);
    expect(scanJsonText('['.repeat(MAX_JSON_DEPTH + 1))).toBe(JSON_TOO_DEEP);
    expect(scanJsonText('{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000))).toBe(JSON_TOO_DEEP);
  });

  it('reads malformed text up to where it breaks, leaving the error to the parser', () => {
    expect(scanJsonText('{"never closed: 12345678901234567890')).toBe(0);
    expect(scanJsonText('[12345678901234567890, "open')).toBe(JSON_LONG_NUMBER);
  });
});
