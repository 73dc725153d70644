/**
 * Shared attribute sets and their extensions: the same keys and values give the same set, any other
 * values another, whatever the order they come in, and past the bound no set is made at all.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_EXTENSIONS, PresetAttributes, type ExtensionValue } from '../../src/server/preset-attributes.js';

const BASE = ['gen_ai.operation.name', 'chat', 'gen_ai.provider.name', 'anthropic'];
const KEYS = Object.freeze(['gen_ai.request.model', 'http.response.status_code', 'tpx.flag']);

describe('PresetAttributes.extended', () => {
  it('adds the keys whose value is given after its own attributes, and leaves out undefined ones', () => {
    const base = new PresetAttributes(BASE);
    expect(base.extended(KEYS, 'model-a', 200, true)?.keysAndValues).toStrictEqual([
      ...BASE,
      'gen_ai.request.model',
      'model-a',
      'http.response.status_code',
      200,
      'tpx.flag',
      true,
    ]);
    expect(base.extended(KEYS, undefined, 529, undefined)?.keysAndValues).toStrictEqual([
      ...BASE,
      'http.response.status_code',
      529,
    ]);
    expect(base.keysAndValues).toStrictEqual(BASE);
  });

  it('gives the same set for the same values, in any order of calls, and another for other values', () => {
    const values = fc.tuple(
      fc.constantFrom<ExtensionValue>('a', 'b', undefined),
      fc.constantFrom<ExtensionValue>(200, '200', 529, undefined),
      fc.constantFrom<ExtensionValue>(true, false, undefined),
    );
    fc.assert(
      fc.property(fc.array(values, { maxLength: 30 }), (calls) => {
        const base = new PresetAttributes(BASE);
        const seen = new Map<string, PresetAttributes>();
        for (const [model, status, flag] of calls) {
          const extended = base.extended(KEYS, model, status, flag)!;
          // A set is told by its values, types included (200 is not '200').
          const key = JSON.stringify([model ?? null, typeof status, status ?? null, flag ?? null]);
          const known = seen.get(key);
          if (known === undefined) {
            for (const other of seen.values()) expect(extended).not.toBe(other);
            seen.set(key, extended);
          } else {
            expect(extended).toBe(known);
          }
          const expected = [...BASE];
          if (model !== undefined) expected.push('gen_ai.request.model', model as string);
          if (status !== undefined) expected.push('http.response.status_code', status as string);
          if (flag !== undefined) expected.push('tpx.flag', flag as string);
          expect(extended.keysAndValues).toStrictEqual(expected);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('tells arrays apart by identity, and keeps the sets of different keys apart', () => {
    const base = new PresetAttributes(BASE);
    const reasons = Object.freeze(['end_turn']);
    const keys = Object.freeze(['gen_ai.response.finish_reasons']);
    expect(base.extended(keys, reasons)).toBe(base.extended(keys, reasons));
    expect(base.extended(keys, Object.freeze(['end_turn']))).not.toBe(base.extended(keys, reasons));
    const otherKeys = Object.freeze(['tpx.other']);
    expect(base.extended(otherKeys, 'x')).not.toBe(base.extended(Object.freeze(['tpx.flag']), 'x'));
  });

  it(`makes at most ${MAX_EXTENSIONS} sets from one, then none, while still giving those it made`, () => {
    const base = new PresetAttributes(BASE);
    const first = base.extended(KEYS, 'model-0', 200, true);
    for (let index = 1; index < MAX_EXTENSIONS; index++) {
      expect(base.extended(KEYS, `model-${index}`, 200, true)).toBeDefined();
    }
    expect(base.extended(KEYS, 'one-too-many', 200, true)).toBeUndefined();
    expect(base.extended(KEYS, 'model-0', 200, false)).toBeUndefined();
    expect(base.extended(KEYS, 'model-0', 200, true)).toBe(first);
  });

  it('refuses no keys or more than four', () => {
    const base = new PresetAttributes(BASE);
    expect(() => base.extended([], 'x')).toThrow(RangeError);
    expect(() => base.extended(['a', 'b', 'c', 'd', 'e'], 'x')).toThrow(RangeError);
  });
});
