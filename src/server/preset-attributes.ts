/**
 * Attributes that open many spans alike: an exchange span's operation, provider, method and path, an
 * attempt span's provider and attempt number. Made once per distinct set (`tracing.ts` keeps them) and
 * shared by every span that starts with them, so the OTLP protobuf encoding writes their fields once and
 * copies those bytes into each span, instead of looking up and copying each attribute on its own.
 *
 * @module
 */
import type { SpanAttributeValue } from './recorded-span.js';

/** A span's first attributes, shared; see the module comment. */
export class PresetAttributes {
  /** Keys and values, alternating, each key once. */
  readonly keysAndValues: readonly (string | SpanAttributeValue)[];
  /**
   * The attributes as OTLP `Span.attributes` fields, set by the protobuf encoding the first time it
   * meets them (`otlp-trace-encoding.ts`); this file encodes nothing itself.
   */
  protobufFields: Uint8Array | undefined;

  constructor(keysAndValues: readonly (string | SpanAttributeValue)[]) {
    this.keysAndValues = Object.freeze([...keysAndValues]);
  }
}
