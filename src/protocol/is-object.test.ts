import { describe, expect, it } from 'vitest';
import { isObject } from './is-object.js';

describe('isObject', () => {
  it('accepts objects with named members, empty ones included', () => {
    expect(isObject({})).toBe(true);
    expect(isObject({ type: 'text' })).toBe(true);
    expect(isObject(Object.create(null))).toBe(true);
  });

  it('refuses null, arrays and every primitive JSON can decode to', () => {
    for (const value of [null, undefined, [], [{}], 'text', '', 0, 1, true, false]) {
      expect(isObject(value)).toBe(false);
    }
  });
});
