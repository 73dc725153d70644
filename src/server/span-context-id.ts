/**
 * A trace id (16 bytes) or span id (8 bytes) as the proxy keeps it: bytes, spelled as lower-case hex
 * only where a string is needed.
 *
 * The OTLP protobuf encoding wants an id's bytes and the W3C `traceparent` header its hex; most ids go
 * only to the encoding (an exchange span's id reaches a `traceparent` only when the exchange is not
 * recorded). Kept as hex, every id was spelled out when made and read back into bytes for each span
 * that names it, two native calls each way per id. Kept as bytes, a new id is a place in a block of
 * random bytes (no copy, no string), is copied into the encoding as it is, and is spelled in hex once,
 * if ever.
 *
 * @module
 */
import { randomFillSync } from 'node:crypto';

/** How many random bytes one refill of the pool holds (16 per trace id, 8 per span id). */
const POOL_BYTES = 8192;
let pool = Buffer.alloc(0);
let poolOffset = 0;

/** A trace or span id; see the module comment. */
export class SpanContextId {
  /** The bytes live in `#source` from `#offset` (the random pool, or the bytes of a parsed header). */
  readonly #source: Buffer;
  readonly #offset: number;
  readonly length: number;
  #hex: string | undefined;

  private constructor(source: Buffer, offset: number, length: number, hex: string | undefined) {
    this.#source = source;
    this.#offset = offset;
    this.length = length;
    this.#hex = hex;
  }

  /**
   * A new random id of `length` bytes, never all zero (an all-zero id is invalid in W3C trace context).
   * The bytes come from the system's random source in blocks of {@link POOL_BYTES}, not one call per id.
   */
  static random(length: number): SpanContextId {
    for (;;) {
      if (poolOffset + length > pool.length) {
        pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
        poolOffset = 0;
      }
      const start = poolOffset;
      poolOffset += length;
      for (let index = start; index < poolOffset; index++) {
        if (pool[index] !== 0) return new SpanContextId(pool, start, length, undefined);
      }
    }
  }

  /**
   * The id spelled `hex` (lower-case hex digits, an even count, as a validated `traceparent` has
   * them); `undefined` for anything else.
   */
  static fromHex(hex: string): SpanContextId | undefined {
    if (!/^(?:[0-9a-f]{2})+$/.test(hex)) return undefined;
    const bytes = Buffer.from(hex, 'hex');
    return new SpanContextId(bytes, 0, bytes.length, hex);
  }

  /** Lower-case hex, as in a `traceparent` header and OTLP's JSON. */
  get hex(): string {
    return (this.#hex ??= this.#source.toString('hex', this.#offset, this.#offset + this.length));
  }

  /** Copies the bytes into `target` at `at`. */
  copyTo(target: Uint8Array, at: number): void {
    const source = this.#source;
    const offset = this.#offset;
    // Eight or sixteen bytes: a loop copies them for less than a call into `copy` or `set` costs.
    for (let index = 0; index < this.length; index++) target[at + index] = source[offset + index]!;
  }
}
