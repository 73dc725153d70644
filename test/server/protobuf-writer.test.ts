/**
 * The protobuf writer's strings: whichever way a string is written (copied unit by unit when it is
 * short ASCII, or by the native UTF-8 writer), the field holds its UTF-8 bytes after their length.
 */
import { describe, expect, it } from 'vitest';
import { ProtobufWriter, writeAscii } from '../../src/server/protobuf-writer.js';

/** A string field as the protocol spells it: tag, varint length, UTF-8 bytes. */
function expectedStringField(field: number, value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  const length: number[] = [];
  let remaining = bytes.length;
  while (remaining >= 0x80) {
    length.push((remaining % 0x80) | 0x80);
    remaining = Math.floor(remaining / 0x80);
  }
  length.push(remaining);
  return Buffer.concat([Buffer.from([(field << 3) | 2, ...length]), bytes]);
}

describe('ProtobufWriter strings', () => {
  const strings = [
    '',
    'a',
    'chat',
    'x'.repeat(20),
    'x'.repeat(21),
    'y'.repeat(42),
    'z'.repeat(43),
    'w'.repeat(200),
    'café',
    'claude-é-model',
    'emoji 🙂',
    'lone \ud800 surrogate',
    `${'a'.repeat(19)}é`,
    '\u007f',
    '\u0080',
  ];

  it.each(strings.map((value) => [JSON.stringify(value), value]))(
    'writes %s as its UTF-8 bytes after their length',
    (_, value) => {
      const writer = new ProtobufWriter(4);
      writer.stringField(1, value);
      expect(writer.bytes()).toStrictEqual(expectedStringField(1, value));
    },
  );

  it('writes strings one after another without leaving bytes of a non-ASCII attempt behind', () => {
    const writer = new ProtobufWriter(8);
    for (const value of strings) writer.stringField(2, value);
    expect(writer.bytes()).toStrictEqual(
      Buffer.concat(strings.map((value) => expectedStringField(2, value))),
    );
  });
});

describe('writeAscii', () => {
  it('copies an ASCII string unit by unit and returns its length', () => {
    const target = new Uint8Array(8);
    expect(writeAscii(target, 2, 'tpx')).toBe(3);
    expect([...target]).toStrictEqual([0, 0, 0x74, 0x70, 0x78, 0, 0, 0]);
  });

  it('refuses a string with a unit above 0x7f', () => {
    expect(writeAscii(new Uint8Array(8), 0, 'ab\u0080')).toBe(-1);
    expect(writeAscii(new Uint8Array(8), 0, 'é')).toBe(-1);
  });
});
