/**
 * Which exchanges are recorded: the specification's samplers, decided from the caller's sampled flag and
 * the trace id alone, so every replica decides the same for one trace.
 */
import { describe, expect, it } from 'vitest';
import { newTraceId } from '../../src/server/recorded-span.js';
import { isTraceSampled, isWithinRatio } from '../../src/server/trace-sampler.js';

describe('isWithinRatio', () => {
  it('keeps no trace at 0 and every trace at 1, whatever its id', () => {
    for (const id of [
      '00000000000000000000000000000001',
      'ffffffffffffffffffffffffffffffff',
      newTraceId().hex,
    ]) {
      expect(isWithinRatio(id, 0)).toBe(false);
      expect(isWithinRatio(id, 1)).toBe(true);
    }
  });

  it('decides by the last 52 bits of the id, as a fraction of 2^52, below the ratio', () => {
    // The last 13 hex digits 8000000000000 are exactly one half; the digits before them do not count.
    expect(isWithinRatio(`${'f'.repeat(19)}7ffffffffffff`, 0.5)).toBe(true);
    expect(isWithinRatio(`${'0'.repeat(19)}8000000000000`, 0.5)).toBe(false);
    expect(isWithinRatio(`${'0'.repeat(19)}3ffffffffffff`, 0.25)).toBe(true);
    expect(isWithinRatio(`${'f'.repeat(19)}4000000000000`, 0.25)).toBe(false);
  });

  it('keeps about the ratio of random traces, and the same ones every time', () => {
    const ids = Array.from({ length: 20_000 }, () => newTraceId().hex);
    const kept = ids.filter((id) => isWithinRatio(id, 0.1));
    expect(kept.length / ids.length).toBeGreaterThan(0.09);
    expect(kept.length / ids.length).toBeLessThan(0.11);
    expect(ids.filter((id) => isWithinRatio(id, 0.1))).toStrictEqual(kept);
    // A larger ratio keeps a superset: raising it never drops a trace that was kept.
    const wider = new Set(ids.filter((id) => isWithinRatio(id, 0.3)));
    expect(kept.every((id) => wider.has(id))).toBe(true);
  });
});

describe('isTraceSampled', () => {
  const id = '4bf92f3577b34da6a3ce929d0e0e4736';

  it('follows the parent under the parent-based samplers, and uses the root sampler only without one', () => {
    for (const name of [
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
    ] as const) {
      expect(isTraceSampled({ name, ratio: 0 }, true, id)).toBe(true);
      expect(isTraceSampled({ name, ratio: 1 }, false, id)).toBe(false);
    }
    expect(isTraceSampled({ name: 'parentbased_always_on' }, undefined, id)).toBe(true);
    expect(isTraceSampled({ name: 'parentbased_always_off' }, undefined, id)).toBe(false);
    expect(isTraceSampled({ name: 'parentbased_traceidratio', ratio: 0 }, undefined, id)).toBe(false);
    expect(isTraceSampled({ name: 'parentbased_traceidratio', ratio: 1 }, undefined, id)).toBe(true);
    expect(isTraceSampled({ name: 'parentbased_traceidratio' }, undefined, id)).toBe(true);
  });

  it('ignores the parent under always_on, always_off and traceidratio', () => {
    for (const parent of [true, false, undefined]) {
      expect(isTraceSampled({ name: 'always_on' }, parent, id)).toBe(true);
      expect(isTraceSampled({ name: 'always_off' }, parent, id)).toBe(false);
      expect(isTraceSampled({ name: 'traceidratio', ratio: 0 }, parent, id)).toBe(false);
      expect(isTraceSampled({ name: 'traceidratio', ratio: 1 }, parent, id)).toBe(true);
    }
  });
});
