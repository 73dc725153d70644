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
});
