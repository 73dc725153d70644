import { describe, expect, it } from 'vitest';
import { rawJsonOf, rememberRawJson } from './raw-json.js';

describe('rememberRawJson and rawJsonOf', () => {
  it('gives back the text a value was parsed from, and nothing for another value', () => {
    const text = '{ "a" : 1 }';
    const value = JSON.parse(text) as object;
    rememberRawJson(value, text);
    expect(rawJsonOf(value)).toBe(text);
    expect(rawJsonOf({ a: 1 })).toBeUndefined();
  });
});
