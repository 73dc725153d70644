/**
 * Span attributes as OTLP protobuf `KeyValue` fields, with the fields that repeat from span to span
 * written once and copied thereafter.
 *
 * Most of an exchange's attributes are the same on every span: the keys always (the proxy's own names),
 * and many values too (`gen_ai.operation.name: chat`, the provider, the method and path, the models, a
 * status of 200, attempt 1). Encoding one means two nested messages, a key and a UTF-8 value; copying
 * its bytes is one call. {@link KeyValueFields} keeps the encoded field of each (key, value) pair it has
 * seen, up to a bound per key, so a value that never repeats (a request id, a token count) fills its
 * key's share once and is then encoded each time, as before, without growing the memory.
 *
 * @module
 */
import { ProtobufWriter } from './protobuf-writer.js';
import type { SpanAttributeValue } from './recorded-span.js';

/** `AnyValue`: string 1, bool 2, int 3, double 4, array 5 (`ArrayValue`: values 1). */
function writeAnyValue(writer: ProtobufWriter, field: number, value: SpanAttributeValue): void {
  const start = writer.beginMessage(field);
  if (typeof value === 'string') writer.stringField(1, value);
  else if (typeof value === 'boolean') writer.boolField(2, value);
  else if (typeof value === 'number') {
    if (Number.isSafeInteger(value)) writer.varintField(3, value);
    else writer.doubleField(4, value);
  } else {
    const array = writer.beginMessage(5);
    for (const item of value) writeAnyValue(writer, 1, item);
    writer.endMessage(array);
  }
  writer.endMessage(start);
}

/** A `KeyValue` (key 1, value 2) as field `field`. */
function writeKeyValue(writer: ProtobufWriter, field: number, key: string, value: SpanAttributeValue): void {
  const start = writer.beginMessage(field);
  writer.stringField(1, key);
  writeAnyValue(writer, 2, value);
  writer.endMessage(start);
}

/** Writes a `KeyValue` field for each attribute (keys and values alternating), encoding each afresh. */
export function writeAttributes(
  writer: ProtobufWriter,
  field: number,
  keysAndValues: readonly (string | SpanAttributeValue)[],
): void {
  for (let index = 0; index < keysAndValues.length; index += 2) {
    writeKeyValue(writer, field, keysAndValues[index] as string, keysAndValues[index + 1]!);
  }
}

/** Bounds of a {@link KeyValueFields}. */
export interface KeyValueFieldsLimits {
  /** Distinct keys whose fields are kept. */
  maxKeys: number;
  /** Distinct values kept per key; a key's values past it are encoded each time. */
  maxValuesPerKey: number;
}

/** The proxy's attributes: some twenty keys, each with a handful of values that repeat. */
const DEFAULT_LIMITS: KeyValueFieldsLimits = { maxKeys: 64, maxValuesPerKey: 16 };

/**
 * What is kept of one key: its encoded `KeyValue.key`, and the whole field for each value seen (a
 * scalar by its value, a frozen array by its identity).
 */
interface KeptKey {
  readonly keyField: Buffer;
  readonly fields: Map<SpanAttributeValue, Buffer>;
}

/**
 * The encoded `KeyValue` fields (as field `field`) of the attribute pairs seen, for copying; see the
 * module comment. Scalar values by value, and arrays by identity when they are frozen (shared by the
 * spans that have them, as `tracing.ts` shares its finish reasons); any other array is encoded each time
 * (after its key's kept bytes).
 */
export class KeyValueFields {
  readonly #field: number;
  readonly #limits: KeyValueFieldsLimits;
  readonly #keys = new Map<string, KeptKey>();
  /** Scratch space each field is encoded in before it is kept. */
  readonly #scratch = new ProtobufWriter(256);
  /** Fields kept, over all keys. */
  size = 0;

  constructor(field: number, limits: KeyValueFieldsLimits = DEFAULT_LIMITS) {
    this.#field = field;
    this.#limits = limits;
  }

  /** Writes a `KeyValue` field for each attribute (keys and values alternating). */
  write(writer: ProtobufWriter, keysAndValues: readonly (string | SpanAttributeValue)[]): void {
    for (let index = 0; index < keysAndValues.length; index += 2) {
      const key = keysAndValues[index] as string;
      const value = keysAndValues[index + 1]!;
      const kept = this.#keys.get(key) ?? this.#keep(key);
      if (kept === undefined) {
        writeKeyValue(writer, this.#field, key, value);
        continue;
      }
      if (typeof value !== 'object' || Object.isFrozen(value)) {
        const known = kept.fields.get(value);
        if (known !== undefined) {
          writer.raw(known);
          continue;
        }
        if (kept.fields.size < this.#limits.maxValuesPerKey) {
          const encoded = this.#encode(kept, value);
          kept.fields.set(value, encoded);
          this.size += 1;
          writer.raw(encoded);
          continue;
        }
      }
      const start = writer.beginMessage(this.#field);
      writer.raw(kept.keyField);
      writeAnyValue(writer, 2, value);
      writer.endMessage(start);
    }
  }

  /** Starts keeping `key`, unless as many keys as allowed are kept already. */
  #keep(key: string): KeptKey | undefined {
    if (this.#keys.size >= this.#limits.maxKeys) return undefined;
    const scratch = this.#scratch;
    scratch.reset();
    scratch.stringField(1, key);
    const kept: KeptKey = { keyField: scratch.bytes(), fields: new Map() };
    this.#keys.set(key, kept);
    return kept;
  }

  #encode(kept: KeptKey, value: SpanAttributeValue): Buffer {
    const scratch = this.#scratch;
    scratch.reset();
    const start = scratch.beginMessage(this.#field);
    scratch.raw(kept.keyField);
    writeAnyValue(scratch, 2, value);
    scratch.endMessage(start);
    return scratch.bytes();
  }
}
