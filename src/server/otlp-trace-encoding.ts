/**
 * Recorded spans as an OTLP `ExportTraceServiceRequest`, in the two encodings of OTLP/HTTP: protobuf
 * (`opentelemetry/proto/collector/trace/v1/trace_service.proto`) and JSON (the protobuf JSON mapping
 * with OTLP's exceptions: ids as hex, enums as numbers).
 *
 * A span is encoded when it ends, onto the batch being filled ({@link SpanBatchEncoding}), so what waits
 * for export is bytes rather than objects: the span itself is garbage at once, while it is young and
 * cheap to collect. A batch becomes a request by putting the resource (the proxy) and the
 * instrumentation scope (tpx-transport) around its spans. Only the fields the proxy's spans use are
 * written; the rest are the protocol's defaults (no events, no links, nothing dropped).
 *
 * @module
 */
import { KeyValueFields, writeAttributes } from './otlp-attributes.js';
import { ProtobufWriter } from './protobuf-writer.js';
import type { RecordedSpan, SpanAttributeValue } from './recorded-span.js';

/** What every request of a process carries besides its spans. */
export interface TraceExportOrigin {
  /** The resource's attributes (`service.name`, and what `OTEL_RESOURCE_ATTRIBUTES` adds). */
  readonly resourceAttributes: readonly (readonly [string, SpanAttributeValue])[];
  readonly scopeName: string;
  readonly scopeVersion?: string | undefined;
}

/** Spans encoded one by one as they end, and the request that exports them. */
export interface SpanBatchEncoding {
  /** Spans in the batch. */
  readonly count: number;
  add(span: RecordedSpan): void;
  /** The whole `ExportTraceServiceRequest` of the batch. */
  request(): Uint8Array;
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

/** `Span`, field by field (`trace.proto`), as field 2 of `ScopeSpans`. */
function writeSpan(writer: ProtobufWriter, span: RecordedSpan): void {
  const start = writer.beginMessage(2);
  writer.idField(1, span.traceId);
  writer.idField(2, span.spanId);
  const parent = span.parent;
  if (parent?.traceState !== undefined && parent.traceState !== '') writer.stringField(3, parent.traceState);
  if (parent !== undefined) writer.idField(4, parent.spanId);
  writer.stringField(5, span.name);
  writer.varintField(6, span.kind);
  writeUnixNanos(writer, 7, span.startMs);
  writeUnixNanos(writer, 8, span.endMs);
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
  writer.endMessage(start);
}

/**
 * The request around a batch's encoded spans: `ExportTraceServiceRequest` { resource_spans 1:
 * `ResourceSpans` { resource 1, scope_spans 2: `ScopeSpans` { scope 1, spans 2… } } }.
 */
function protobufRequest(origin: TraceExportOrigin, spans: Buffer): Buffer {
  const writer = new ProtobufWriter(512 + spans.length);
  const resourceSpans = writer.beginMessage(1);
  const resource = writer.beginMessage(1);
  writeAttributes(writer, 1, origin.resourceAttributes.flat());
  writer.endMessage(resource);
  const scopeSpans = writer.beginMessage(2);
  // `InstrumentationScope`: name 1, version 2.
  const scope = writer.beginMessage(1);
  writer.stringField(1, origin.scopeName);
  if (origin.scopeVersion !== undefined) writer.stringField(2, origin.scopeVersion);
  writer.endMessage(scope);
  writer.raw(spans);
  writer.endMessage(scopeSpans);
  writer.endMessage(resourceSpans);
  // The writer is this request's alone: its bytes are the request, not copied once more.
  return writer.view();
}

/** Bytes a span usually takes, to size a batch's buffer once (it grows if the batch needs more). */
const TYPICAL_SPAN_BYTES = 384;

class ProtobufSpanBatch implements SpanBatchEncoding {
  readonly #origin: TraceExportOrigin;
  readonly #writer: ProtobufWriter;
  count = 0;

  constructor(origin: TraceExportOrigin, expectedSpans: number) {
    this.#origin = origin;
    this.#writer = new ProtobufWriter(Math.max(1024, expectedSpans * TYPICAL_SPAN_BYTES));
  }

  add(span: RecordedSpan): void {
    writeSpan(this.#writer, span);
    this.count += 1;
  }

  request(): Uint8Array {
    return protobufRequest(this.#origin, this.#writer.view());
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
    attributes: jsonAttributes(span.attributes),
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
