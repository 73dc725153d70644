import { describe, expect, it } from 'vitest';
import { createIdGenerator } from './id-generator.js';

describe('createIdGenerator', () => {
  it('produces distinct ids made only of tool-id characters', () => {
    const next = createIdGenerator();
    const ids = Array.from({ length: 10_000 }, () => next());
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('gives two generators (two processes, two replicas) disjoint ids', () => {
    const first = createIdGenerator();
    const second = createIdGenerator();
    const a = new Set(Array.from({ length: 1_000 }, () => first()));
    expect(Array.from({ length: 1_000 }, () => second()).some((id) => a.has(id))).toBe(false);
  });

  it('counts up from 0 in base 36 after one prefix per generator', () => {
    const next = createIdGenerator();
    const ids = Array.from({ length: 37 }, () => next());
    const prefix = ids[0]!.slice(0, -1);
    expect(ids[0]).toBe(`${prefix}0`);
    expect([ids[1], ids[10], ids[35], ids[36]]).toStrictEqual([
      `${prefix}1`,
      `${prefix}a`,
      `${prefix}z`,
      `${prefix}10`,
    ]);
  });
});
