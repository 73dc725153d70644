/**
 * A protobuf wire-format writer over a Node `Buffer`, for the OTLP span encoding: varints, fixed-width
 * numbers, strings and bytes, and nested messages whose length is filled in when they end. Short ASCII
 * strings are copied unit by unit, others go through `Buffer`'s native UTF-8 writer, ids are copied
 * from their bytes, and a constant field can be written once and copied thereafter ({@link ProtobufWriter.raw}),
 * which is what makes an exchange's spans cheap to encode.
 *
 * ```ts
 * const writer = new ProtobufWriter();
 * const start = writer.beginMessage(1); // field 1, length-delimited
 * writer.stringField(1, 'name');
 * writer.endMessage(start);
 * writer.bytes(); // 0a 06 0a 04 6e 61 6d 65
 * ```
 *
 * @module
 */

import type { SpanContextId } from './span-context-id.js';

/** Protobuf wire types. */
export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LENGTH_DELIMITED = 2;
export const WIRE_FIXED32 = 5;

/** Bytes of `value` as a varint (a non-negative integer below 2^53). */
export function varintSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 0x80);
    size += 1;
  }
  return size;
}

/**
 * The longest string {@link ProtobufWriter.string} copies unit by unit when it is ASCII: on Node 20 the
 * loop beats the native writer's call up to about this length, and loses beyond.
 */
const MAX_ASCII_COPY_UNITS = 20;

/**
 * Writes `value` at `start` when every unit is ASCII, returning the bytes written (one per unit); -1,
 * with whatever was written meanwhile left to be overwritten, at the first unit that is not.
 */
export function writeAscii(target: Uint8Array, start: number, value: string): number {
  const length = value.length;
  for (let index = 0; index < length; index++) {
    const unit = value.charCodeAt(index);
    if (unit >= 0x80) return -1;
    target[start + index] = unit;
  }
  return length;
}

export class ProtobufWriter {
  #buffer: Buffer;
  #position = 0;

  constructor(initialBytes = 1024) {
    this.#buffer = Buffer.allocUnsafe(initialBytes);
  }

  /** Bytes written so far. */
  get length(): number {
    return this.#position;
  }

  #ensure(more: number): void {
    const needed = this.#position + more;
    if (needed <= this.#buffer.length) return;
    let size = this.#buffer.length * 2;
    while (size < needed) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.#buffer.copy(grown, 0, 0, this.#position);
    this.#buffer = grown;
  }

  /**
   * A varint. Integers from 0 to 2^53 are written as they are; a negative integer (an `int64`) as its
   * 64-bit two's complement, in ten bytes, as the protocol asks.
   */
  varint(value: number): void {
    if (value < 0) {
      this.#bigVarint(BigInt.asUintN(64, BigInt(value)));
      return;
    }
    this.#ensure(8);
    const buffer = this.#buffer;
    while (value >= 0x80) {
      buffer[this.#position++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    buffer[this.#position++] = value;
  }

  #bigVarint(value: bigint): void {
    this.#ensure(10);
    while (value >= 0x80n) {
      this.#buffer[this.#position++] = Number(value & 0x7fn) | 0x80;
      value >>= 7n;
    }
    this.#buffer[this.#position++] = Number(value);
  }

  tag(field: number, wireType: number): void {
    this.varint(field * 8 + wireType);
  }

  varintField(field: number, value: number): void {
    this.tag(field, WIRE_VARINT);
    this.varint(value);
  }

  fixed32Field(field: number, value: number): void {
    this.tag(field, WIRE_FIXED32);
    this.#ensure(4);
    this.#uint32(value >>> 0);
  }

  /**
   * Four little-endian bytes of an unsigned 32-bit integer, stored one by one: `Buffer`'s
   * `writeUInt32LE` checks its arguments first, which costs more than the four stores.
   */
  #uint32(value: number): void {
    const buffer = this.#buffer;
    const position = this.#position;
    buffer[position] = value & 0xff;
    buffer[position + 1] = (value >>> 8) & 0xff;
    buffer[position + 2] = (value >>> 16) & 0xff;
    buffer[position + 3] = value >>> 24;
    this.#position = position + 4;
  }

  /** A `fixed64` given as its low and high 32 bits. */
  fixed64PartsField(field: number, low: number, high: number): void {
    this.tag(field, WIRE_FIXED64);
    this.#ensure(8);
    this.#uint32(low);
    this.#uint32(high);
  }

  doubleField(field: number, value: number): void {
    this.tag(field, WIRE_FIXED64);
    this.#ensure(8);
    this.#position = this.#buffer.writeDoubleLE(value, this.#position);
  }

  boolField(field: number, value: boolean): void {
    this.varintField(field, value ? 1 : 0);
  }

  stringField(field: number, value: string): void {
    this.tag(field, WIRE_LENGTH_DELIMITED);
    this.string(value);
  }

  /** A string's length and UTF-8 bytes. */
  string(value: string): void {
    // At most three bytes per UTF-16 unit: a string under 43 units has a one-byte length.
    if (value.length < 43) {
      this.#ensure(1 + value.length * 3);
      const start = this.#position + 1;
      // Most of a span's strings are short ASCII (operation, method, path, models, finish reasons):
      // copied unit by unit, they cost less than a call into the native UTF-8 writer, which is kept for
      // longer strings (there it is the cheaper) and anything else.
      let written = value.length <= MAX_ASCII_COPY_UNITS ? writeAscii(this.#buffer, start, value) : -1;
      if (written < 0) written = this.#buffer.write(value, start, 'utf8');
      this.#buffer[this.#position] = written;
      this.#position = start + written;
      return;
    }
    const bytes = Buffer.byteLength(value, 'utf8');
    this.varint(bytes);
    this.#ensure(bytes);
    this.#position += this.#buffer.write(value, this.#position, bytes, 'utf8');
  }

  /** A `bytes` field holding a trace or span id. */
  idField(field: number, id: SpanContextId): void {
    const length = id.length;
    this.tag(field, WIRE_LENGTH_DELIMITED);
    this.varint(length);
    this.#ensure(length);
    id.copyTo(this.#buffer, this.#position);
    this.#position += length;
  }

  /** Bytes written as they are (an encoded field kept from an earlier write). */
  raw(bytes: Uint8Array): void {
    this.#ensure(bytes.length);
    this.#buffer.set(bytes, this.#position);
    this.#position += bytes.length;
  }

  /**
   * Starts a length-delimited field holding a message; returns what {@link endMessage} needs.
   * `lengthBytes` are kept for the length (one, by default: up to 127 bytes); a message whose length
   * takes more or fewer moves itself once it ends, so the length is always written in as few bytes
   * as it takes. Keeping two for a message that is usually 128 bytes to 16 KiB (a span) saves the move.
   */
  beginMessage(field: number, lengthBytes = 1): number {
    this.tag(field, WIRE_LENGTH_DELIMITED);
    this.#ensure(lengthBytes);
    this.#position += lengthBytes;
    return this.#position;
  }

  /** Ends the message begun at `start`, with the `lengthBytes` given to {@link beginMessage}. */
  endMessage(start: number, lengthBytes = 1): void {
    const length = this.#position - start;
    const shift = varintSize(length) - lengthBytes;
    if (shift !== 0) {
      if (shift > 0) this.#ensure(shift);
      this.#buffer.copyWithin(start + shift, start, this.#position);
      this.#position += shift;
    }
    const end = this.#position;
    this.#position = start - lengthBytes;
    this.varint(length);
    this.#position = end;
  }

  /**
   * Moves the write position to `position`, growing the buffer when it lies beyond: to leave room for
   * something written later, or to write it there. Bytes skipped over are not cleared.
   */
  seek(position: number): void {
    this.#ensure(position - this.#position);
    this.#position = position;
  }

  /** What was written from `start`, as a view of this writer's buffer (valid until the next write). */
  view(start = 0): Buffer {
    return this.#buffer.subarray(start, this.#position);
  }

  /** A copy of what was written. */
  bytes(): Buffer {
    return Buffer.from(this.view());
  }

  /** Forgets what was written, keeping the buffer. */
  reset(): void {
    this.#position = 0;
  }
}
