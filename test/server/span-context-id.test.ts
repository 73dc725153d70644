/**
 * Trace and span ids kept as bytes: copied into an encoding as they are, spelled as lower-case hex when
 * a header or OTLP's JSON needs them, and never changed by the ids made after them.
 */
import { describe, expect, it } from 'vitest';
import { SpanContextId } from '../../src/server/span-context-id.js';

function bytesOf(id: SpanContextId): Buffer {
  const target = Buffer.alloc(id.length + 2);
  id.copyTo(target, 1);
  expect(target[0]).toBe(0);
  expect(target[id.length + 1]).toBe(0);
  return target.subarray(1, id.length + 1);
}

describe('SpanContextId', () => {
  it('makes random ids of the length asked, whose bytes are what their hex spells', () => {
    for (const length of [16, 8]) {
      const id = SpanContextId.random(length);
      expect(id.length).toBe(length);
      expect(id.hex).toMatch(new RegExp(`^[0-9a-f]{${length * 2}}$`));
      expect(bytesOf(id)).toStrictEqual(Buffer.from(id.hex, 'hex'));
    }
  });

  it('keeps the bytes of every id while later ids refill the random pool', () => {
    // 8 bytes each: 3000 ids take the pool's 8192 bytes about three times over.
    const ids = Array.from({ length: 3000 }, () => SpanContextId.random(8));
    const spelled = ids.map((id) => id.hex);
    const more = Array.from({ length: 3000 }, () => SpanContextId.random(16));
    expect(new Set([...spelled, ...more.map((id) => id.hex)]).size).toBe(6000);
    expect(ids.map((id) => bytesOf(id).toString('hex'))).toStrictEqual(spelled);
  });

  it('reads an id from lower-case hex, keeping its spelling', () => {
    const id = SpanContextId.fromHex('00f067aa0ba902b7')!;
    expect(id.length).toBe(8);
    expect(id.hex).toBe('00f067aa0ba902b7');
    expect([...bytesOf(id)]).toStrictEqual([0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]);
  });

  it('refuses hex that is not lower-case, not whole bytes, or empty', () => {
    for (const hex of ['00F067AA0BA902B7', '00f067aa0ba902b', '00f067aa0ba902bz', '', ' 00f067aa0ba902b7']) {
      expect(SpanContextId.fromHex(hex)).toBeUndefined();
    }
  });
});
