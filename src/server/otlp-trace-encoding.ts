/**
 * Recorded spans as an OTLP `ExportTraceServiceRequest`, in the two encodings of OTLP/HTTP: protobuf
 * (`opentelemetry/proto/collector/trace/v1/trace_service.proto`) and JSON (the protobuf JSON mapping
 * with OTLP's exceptions: ids as hex, enums as numbers).
 *
 * A span is encoded soon after it ends, onto the batch being filled ({@link SpanBatchEncoding}), with
 * the few dozen that ended about the same time (`span-batches.ts`), so what waits for export is bytes
 * rather than objects: the span itself is garbage within moments, while it is young and cheap to
 * collect. A batch becomes a request by putting the resource (the proxy) and the instrumentation scope
 * (tpx-transport) around its spans. Only the fields the proxy's spans use are
 * written; the rest are the protocol's defaults (no events, no links, nothing dropped).
 *
 * @module
 */
import { KeyValueFields, writeAttributes } from './otlp-attributes.js';
import type { PresetAttributes } from './preset-attributes.js';
import { ProtobufWriter, varintSize, WIRE_LENGTH_DELIMITED } from './protobuf-writer.js';
import type { RecordedSpan, SpanAttributeValue } from './recorded-span.js';

/** What every request of a process carries besides its spans. */
export interface TraceExportOrigin {
  /** The resource's attributes (`service.name`, and what `OTEL_RESOURCE_ATTRIBUTES` adds). */
  readonly resourceAttributes: readonly (readonly [string, SpanAttributeValue])[];
  readonly scopeName: string;
  readonly scopeVersion?: string | undefined;
}

/** Spans encoded one after the other, and the request that exports them. */
export interface SpanBatchEncoding {
  /** Spans in the batch. */
  readonly count: number;
  add(span: RecordedSpan): void;
  /**
   * The whole `ExportTraceServiceRequest` of the batch, in bytes of its own: refilling the batch never
   * changes a request already made.
   */
  request(): Uint8Array;
  /** Empties the batch to be filled again, keeping its buffer. */
  reset(): void;
}

/**
 * OTLP's span flags: the low byte is the W3C trace flags (always sampled here: only sampled spans are
 * recorded), bit 8 says whether the parent's remoteness is known (always, here), bit 9 that it is remote.
 */
const SAMPLED = 0x01;
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

function spanFlags(span: RecordedSpan): number {
  return SAMPLED | HAS_IS_REMOTE | (span.parent?.isRemote === true ? IS_REMOTE : 0);
}

/** A Unix time in milliseconds (with a fraction) as nanoseconds, exactly as an integer. */
export function unixNanos(ms: number): bigint {
  const seconds = Math.floor(ms / 1000);
  return BigInt(seconds) * 1_000_000_000n + BigInt(nanosWithinSecond(ms, seconds));
}

function nanosWithinSecond(ms: number, seconds: number): number {
  return Math.min(999_999_999, Math.round((ms - seconds * 1000) * 1e6));
}

const TWO_16 = 0x1_0000;
const TWO_32 = 0x1_0000_0000;

/**
 * `fixed64` field `field` holding the Unix time `ms` in nanoseconds, written as two 32-bit halves
 * computed exactly in doubles (every intermediate stays below 2^53), which allocates nothing where a
 * `BigInt` would allocate twice per timestamp.
 */
function writeUnixNanos(writer: ProtobufWriter, field: number, ms: number): void {
  const seconds = Math.floor(ms / 1000);
  const nanos = nanosWithinSecond(ms, seconds);
  // seconds × 10^9 + nanos = high16 × 10^9 × 2^16 + (low16 × 10^9 + nanos)
  const upper = Math.floor(seconds / TWO_16) * 1e9;
  const lower = (seconds % TWO_16) * 1e9 + nanos;
  const low = (upper % TWO_16) * TWO_16 + (lower % TWO_32);
  writer.fixed64PartsField(
    field,
    low % TWO_32,
    Math.floor(upper / TWO_16) + Math.floor(lower / TWO_32) + Math.floor(low / TWO_32),
  );
}

/** The `Span.attributes` (field 9) fields that repeat, kept encoded for the whole process. */
const spanAttributeFields = new KeyValueFields(9);

/** The `Span.attributes` fields of preset attributes, encoded once for every span that has them. */
function presetFields(preset: PresetAttributes): Uint8Array {
  const writer = new ProtobufWriter(256);
  writeAttributes(writer, 9, preset.keysAndValues);
  return writer.bytes();
}

/** A span's length takes two bytes (128 bytes to 16 KiB): kept for it, the span is never moved. */
const SPAN_LENGTH_BYTES = 2;

/** `Span`, field by field (`trace.proto`), as field 2 of `ScopeSpans`. */
function writeSpan(writer: ProtobufWriter, span: RecordedSpan): void {
  const start = writer.beginMessage(2, SPAN_LENGTH_BYTES);
  writer.idField(1, span.traceId);
  writer.idField(2, span.spanId);
  const parent = span.parent;
  if (parent?.traceState !== undefined && parent.traceState !== '') writer.stringField(3, parent.traceState);
  if (parent !== undefined) writer.idField(4, parent.spanId);
  writer.stringField(5, span.name);
  writer.varintField(6, span.kind);
  writeUnixNanos(writer, 7, span.startMs);
  writeUnixNanos(writer, 8, span.endMs);
  const preset = span.preset;
  if (preset !== undefined) writer.raw((preset.protobufFields ??= presetFields(preset)));
  spanAttributeFields.write(writer, span.attributes);
  if (span.statusCode !== 0) {
    // `Status`: message 2, code 3.
    const status = writer.beginMessage(15);
    if (span.statusMessage !== undefined && span.statusMessage !== '')
      writer.stringField(2, span.statusMessage);
    writer.varintField(3, span.statusCode);
    writer.endMessage(status);
  }
  writer.fixed32Field(16, spanFlags(span));
  writer.endMessage(start, SPAN_LENGTH_BYTES);
}

/**
 * The parts of every request of one origin that do not change: the `Resource` field (field 1 of
 * `ResourceSpans`) and the `InstrumentationScope` field (field 1 of `ScopeSpans`), encoded.
 */
interface EncodedOrigin {
  readonly resourceField: Buffer;
  readonly scopeField: Buffer;
  /** Room kept before a batch's spans for the request's head ({@link writeRequestHead}), at most. */
  readonly headBytes: number;
}

/** The most bytes a length varint takes here (a request is far below 2^35 bytes). */
const MAX_LENGTH_BYTES = 5;

const encodedOrigins = new WeakMap<TraceExportOrigin, EncodedOrigin>();

function encodeOrigin(origin: TraceExportOrigin): EncodedOrigin {
  const known = encodedOrigins.get(origin);
  if (known !== undefined) return known;
  const resource = new ProtobufWriter(256);
  const resourceStart = resource.beginMessage(1);
  writeAttributes(resource, 1, origin.resourceAttributes.flat());
  resource.endMessage(resourceStart);
  // `InstrumentationScope`: name 1, version 2.
  const scope = new ProtobufWriter(64);
  const scopeStart = scope.beginMessage(1);
  scope.stringField(1, origin.scopeName);
  if (origin.scopeVersion !== undefined) scope.stringField(2, origin.scopeVersion);
  scope.endMessage(scopeStart);
  const resourceField = resource.bytes();
  const scopeField = scope.bytes();
  const encoded: EncodedOrigin = {
    resourceField,
    scopeField,
    headBytes: 2 * (1 + MAX_LENGTH_BYTES) + resourceField.length + scopeField.length,
  };
  encodedOrigins.set(origin, encoded);
  return encoded;
}

/**
 * Writes the head of the request around `spansBytes` bytes of encoded spans so that it ends at `end`,
 * and returns where it starts: `ExportTraceServiceRequest` { resource_spans 1: `ResourceSpans` {
 * resource 1, scope_spans 2: `ScopeSpans` { scope 1, spans 2… } } }, the spans being what follows.
 */
function writeRequestHead(
  writer: ProtobufWriter,
  origin: EncodedOrigin,
  end: number,
  spansBytes: number,
): number {
  const scopeSpansLength = origin.scopeField.length + spansBytes;
  const resourceSpansLength =
    origin.resourceField.length + 1 + varintSize(scopeSpansLength) + scopeSpansLength;
  const headLength =
    1 +
    varintSize(resourceSpansLength) +
    origin.resourceField.length +
    1 +
    varintSize(scopeSpansLength) +
    origin.scopeField.length;
  const start = end - headLength;
  const written = writer.length;
  writer.seek(start);
  writer.tag(1, WIRE_LENGTH_DELIMITED);
  writer.varint(resourceSpansLength);
  writer.raw(origin.resourceField);
  writer.tag(2, WIRE_LENGTH_DELIMITED);
  writer.varint(scopeSpansLength);
  writer.raw(origin.scopeField);
  writer.seek(written);
  return start;
}

/** Bytes a span usually takes, to size a batch's buffer once (it grows if the batch needs more). */
const TYPICAL_SPAN_BYTES = 384;

/**
 * A batch in one buffer: room for the request's head, then the spans as they end. The request is a copy
 * of that buffer from where its head starts, one copy per export: the transport may still be writing a
 * request's bytes after the collector answered it (a server may answer before it has read the whole
 * request), or retrying them, while the batch is filled again.
 */
class ProtobufSpanBatch implements SpanBatchEncoding {
  readonly #origin: EncodedOrigin;
  readonly #writer: ProtobufWriter;
  count = 0;

  constructor(origin: TraceExportOrigin, expectedSpans: number) {
    this.#origin = encodeOrigin(origin);
    this.#writer = new ProtobufWriter(
      this.#origin.headBytes + Math.max(1024, expectedSpans * TYPICAL_SPAN_BYTES),
    );
    this.#writer.seek(this.#origin.headBytes);
  }

  add(span: RecordedSpan): void {
    const writer = this.#writer;
    const before = writer.length;
    try {
      writeSpan(writer, span);
    } catch (error) {
      // Nothing of a span that could not be encoded stays in the batch.
      writer.seek(before);
      throw error;
    }
    this.count += 1;
  }

  reset(): void {
    this.#writer.seek(this.#origin.headBytes);
    this.count = 0;
  }

  request(): Uint8Array {
    const headBytes = this.#origin.headBytes;
    const start = writeRequestHead(this.#writer, this.#origin, headBytes, this.#writer.length - headBytes);
    return Buffer.from(this.#writer.view(start));
  }
}

interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string;
  doubleValue?: number;
  arrayValue?: { values: JsonAnyValue[] };
}

function jsonValue(value: SpanAttributeValue): JsonAnyValue {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') {
    // int64 is a decimal string in the protobuf JSON mapping.
    return Number.isSafeInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  }
  return { arrayValue: { values: value.map(jsonValue) } };
}

function jsonAttributes(keysAndValues: readonly (string | SpanAttributeValue)[]) {
  const attributes: { key: string; value: JsonAnyValue }[] = [];
  for (let index = 0; index < keysAndValues.length; index += 2) {
    attributes.push({ key: keysAndValues[index] as string, value: jsonValue(keysAndValues[index + 1]!) });
  }
  return attributes;
}

function jsonSpan(span: RecordedSpan): string {
  const parent = span.parent;
  return JSON.stringify({
    traceId: span.traceId.hex,
    spanId: span.spanId.hex,
    ...(parent?.traceState === undefined || parent.traceState === ''
      ? {}
      : { traceState: parent.traceState }),
    ...(parent === undefined ? {} : { parentSpanId: parent.spanId.hex }),
    flags: spanFlags(span),
    name: span.name,
    kind: span.kind,
    startTimeUnixNano: String(unixNanos(span.startMs)),
    endTimeUnixNano: String(unixNanos(span.endMs)),
    attributes:
      span.preset === undefined
        ? jsonAttributes(span.attributes)
        : [...jsonAttributes(span.preset.keysAndValues), ...jsonAttributes(span.attributes)],
    status:
      span.statusCode === 0
        ? {}
        : {
            code: span.statusCode,
            ...(span.statusMessage === undefined || span.statusMessage === ''
              ? {}
              : { message: span.statusMessage }),
          },
  });
}

class JsonSpanBatch implements SpanBatchEncoding {
  readonly #origin: TraceExportOrigin;
  readonly #spans: string[] = [];

  constructor(origin: TraceExportOrigin) {
    this.#origin = origin;
  }

  get count(): number {
    return this.#spans.length;
  }

  add(span: RecordedSpan): void {
    this.#spans.push(jsonSpan(span));
  }

  reset(): void {
    this.#spans.length = 0;
  }

  request(): Uint8Array {
    const origin = this.#origin;
    const resource = JSON.stringify({ attributes: jsonAttributes(origin.resourceAttributes.flat()) });
    const scope = JSON.stringify({
      name: origin.scopeName,
      ...(origin.scopeVersion === undefined ? {} : { version: origin.scopeVersion }),
    });
    return Buffer.from(
      `{"resourceSpans":[{"resource":${resource},"scopeSpans":[{"scope":${scope},"spans":[${this.#spans.join(',')}]}]}]}`,
      'utf8',
    );
  }
}

/** Starts a batch of spans in `protocol`'s encoding, sized for `expectedSpans`. */
export function newSpanBatch(
  protocol: 'http/protobuf' | 'http/json',
  origin: TraceExportOrigin,
  expectedSpans: number,
): SpanBatchEncoding {
  return protocol === 'http/json' ? new JsonSpanBatch(origin) : new ProtobufSpanBatch(origin, expectedSpans);
}
