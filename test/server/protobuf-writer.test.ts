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

describe('ProtobufWriter messages and fixed-width numbers', () => {
  /** A message of `size` bytes of content, begun with `lengthBytes` kept for its length. */
  function message(size: number, lengthBytes: number): Buffer {
    const writer = new ProtobufWriter(4);
    writer.varintField(1, 150);
    const start = writer.beginMessage(2, lengthBytes);
    writer.raw(Buffer.alloc(size, 0x61));
    writer.endMessage(start, lengthBytes);
    writer.varintField(3, 1);
    return writer.bytes();
  }

  it.each([0, 1, 127, 128, 300, 16_383, 16_384, 70_000])(
    'writes a message of %i bytes with its length in as few bytes as it takes, however many were kept',
    (size) => {
      const lengthBytes = size < 0x80 ? 1 : size < 0x4000 ? 2 : 3;
      const length: number[] = [];
      for (
        let remaining = size, index = 0;
        index < lengthBytes;
        index++, remaining = Math.floor(remaining / 0x80)
      ) {
        length.push((remaining % 0x80) | (index < lengthBytes - 1 ? 0x80 : 0));
      }
      const expected = Buffer.concat([
        Buffer.from([0x08, 0x96, 0x01, 0x12, ...length]),
        Buffer.alloc(size, 0x61),
        Buffer.from([0x18, 0x01]),
      ]);
      for (const kept of [1, 2, 3]) expect(message(size, kept)).toStrictEqual(expected);
    },
  );

  it('writes fixed32 and fixed64 fields little-endian, to the top bit', () => {
    const writer = new ProtobufWriter(2);
    writer.fixed32Field(16, 0x301);
    writer.fixed32Field(16, 0xfedcba98);
    writer.fixed64PartsField(7, 0x89abcdef, 0xfedcba98);
    expect(writer.bytes().toString('hex')).toBe(
      ['8501', '01030000', '8501', '98badcfe', '39', 'efcdab89', '98badcfe'].join(''),
    );
  });
});
