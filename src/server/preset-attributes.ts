/**
 * Attributes that many spans share: an exchange span's operation, provider, method and path, an
 * attempt span's provider and attempt number, and, once the span ends, those followed by what its end
 * added that repeats from exchange to exchange (the models, the status, the finish reasons). Made once
 * per distinct set (`tracing.ts` keeps them) and shared by every span that has them, so the OTLP
 * protobuf encoding writes their fields once and copies those bytes into each span, instead of looking
 * up and copying each attribute on its own.
 *
 * @module
 */
import type { SpanAttributeValue } from './recorded-span.js';

/** A value a preset set is extended with; `undefined` leaves its key out. */
export type ExtensionValue = SpanAttributeValue | undefined;

/** One level of a set's extensions: the next value's level, or at the last value, the extended set. */
type ExtensionLevel = Map<ExtensionValue, ExtensionLevel | PresetAttributes>;

/** Distinct sets one set may be extended into; past it {@link PresetAttributes.extended} makes none. */
export const MAX_EXTENSIONS = 256;

/** A set's latest extension: its keys, its values and what they made. */
interface LatestExtension {
  readonly keys: readonly string[];
  readonly first: ExtensionValue;
  readonly second: ExtensionValue;
  readonly third: ExtensionValue;
  readonly fourth: ExtensionValue;
  readonly extended: PresetAttributes;
}

/** The `index`th of up to four values. */
function pick(
  index: number,
  first: ExtensionValue,
  second: ExtensionValue,
  third: ExtensionValue,
  fourth: ExtensionValue,
): ExtensionValue {
  switch (index) {
    case 0:
      return first;
    case 1:
      return second;
    case 2:
      return third;
    default:
      return fourth;
  }
}

/** A span's first attributes, shared; see the module comment. */
export class PresetAttributes {
  /** Keys and values, alternating, each key once. */
  readonly keysAndValues: readonly (string | SpanAttributeValue)[];
  /**
   * The attributes as OTLP `Span.attributes` fields, set by the protobuf encoding the first time it
   * meets them (`otlp-trace-encoding.ts`); this file encodes nothing itself.
   */
  protobufFields: Uint8Array | undefined;
  /** The sets made from this one by {@link extended}, by their keys, then value by value. */
  #extensions: Map<readonly string[], ExtensionLevel> | undefined;
  #extensionCount = 0;
  /** Consecutive spans mostly end alike: the latest extension is tried first. */
  #latest: LatestExtension | undefined;

  constructor(keysAndValues: readonly (string | SpanAttributeValue)[]) {
    this.keysAndValues = Object.freeze([...keysAndValues]);
  }

  /**
   * This set followed by `keys` (one to four) with the values given in their order (a key whose value
   * is `undefined` is left out), shared: the same keys and values give the same object. Values are told
   * apart as a `Map` tells its keys apart, so an array value is the same only when it is the same array
   * (pass frozen arrays that are themselves shared). `undefined` once {@link MAX_EXTENSIONS} sets were
   * made from this one: the caller then sets the attributes on its span instead. The keys must not be
   * this set's own.
   */
  extended(
    keys: readonly string[],
    first: ExtensionValue,
    second?: ExtensionValue,
    third?: ExtensionValue,
    fourth?: ExtensionValue,
  ): PresetAttributes | undefined {
    const latest = this.#latest;
    if (
      latest !== undefined &&
      latest.keys === keys &&
      latest.first === first &&
      latest.second === second &&
      latest.third === third &&
      latest.fourth === fourth
    ) {
      return latest.extended;
    }
    if (keys.length < 1 || keys.length > 4) {
      throw new RangeError(`a set is extended by one to four keys, not ${keys.length}`);
    }
    this.#extensions ??= new Map();
    let level = this.#extensions.get(keys);
    if (level === undefined) {
      level = new Map();
      this.#extensions.set(keys, level);
    }
    const last = keys.length - 1;
    for (let index = 0; index < last; index++) {
      const value = pick(index, first, second, third, fourth);
      let next = level.get(value) as ExtensionLevel | undefined;
      if (next === undefined) {
        if (this.#extensionCount >= MAX_EXTENSIONS) return undefined;
        next = new Map();
        level.set(value, next);
      }
      level = next;
    }
    const lastValue = pick(last, first, second, third, fourth);
    let extended = level.get(lastValue) as PresetAttributes | undefined;
    if (extended === undefined) {
      if (this.#extensionCount >= MAX_EXTENSIONS) return undefined;
      const keysAndValues = [...this.keysAndValues];
      for (let index = 0; index <= last; index++) {
        const value = pick(index, first, second, third, fourth);
        if (value !== undefined) keysAndValues.push(keys[index]!, value);
      }
      extended = new PresetAttributes(keysAndValues);
      level.set(lastValue, extended);
      this.#extensionCount += 1;
    }
    this.#latest = { keys, first, second, third, fourth, extended };
    return extended;
  }
}
