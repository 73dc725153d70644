import { describe, expect, it } from 'vitest';
import { EXCERPT_LENGTH, collapse, excerpt, safeStringify, truncate } from './quote-upstream-text.js';

describe('quoting upstream text', () => {
  it('collapses whitespace runs to one space and trims the ends', () => {
    expect(collapse('  a\n\n b\t c  ')).toBe('a b c');
  });

  it('cuts text longer than the length and marks the cut', () => {
    expect(truncate('abcdef', 6)).toBe('abcdef');
    expect(truncate('abcdefg', 6)).toBe('abcdef…');
  });

  it('quotes at most EXCERPT_LENGTH characters of collapsed text', () => {
    expect(EXCERPT_LENGTH).toBe(200);
    expect(excerpt(` ${'y '.repeat(150)}`)).toBe(`${'y '.repeat(100)}…`);
  });

  it('gives the JSON text of a value, or its string form when it has none or cannot be serialised', () => {
    expect(safeStringify({ a: [1, 'b'] })).toBe('{"a":[1,"b"]}');
    expect(safeStringify(undefined)).toBe('undefined');
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(safeStringify(cyclic)).toBe('[object Object]');
    expect(safeStringify(10n)).toBe('10');
  });
});
