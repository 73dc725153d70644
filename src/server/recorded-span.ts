/**
 * One span as `tpx serve` records it: plain fields, set while the exchange runs and read once when its
 * batch is encoded for OTLP (`otlp-trace-encoding.ts`). It is the whole of what the proxy's two kinds
 * of span need (an exchange and its upstream attempts: ids, a name, a kind, two times, attributes and a
 * status), which is why it is not the OpenTelemetry SDK's span: that one validates and copies every
 * attribute, keeps a resource, a scope, limits, events and links, and costs several times the whole
 * budget of an exchange's telemetry.
 *
 * Ids are bytes, spelled in hex only where a string is needed (`span-context-id.ts`). Times are
 * milliseconds since the Unix epoch, with the fraction the monotonic clock gives.
 *
 * @module
 */
import type { PresetAttributes } from './preset-attributes.js';
import { SpanContextId } from './span-context-id.js';

/** OTLP's span kinds (`opentelemetry/proto/trace/v1/trace.proto`): the two the proxy makes. */
export const SPAN_KIND_SERVER = 2;
export const SPAN_KIND_CLIENT = 3;

/** OTLP's status code for a span that failed. */
export const STATUS_CODE_ERROR = 2;

/** An attribute's value: what OTLP calls a string, an integer, a double, a boolean, or an array of strings. */
export type SpanAttributeValue = string | number | boolean | readonly string[];

/** The parent of a span, as it came in a `traceparent` header or from the exchange span. */
export interface ParentSpan {
  readonly traceId: SpanContextId;
  readonly spanId: SpanContextId;
  /** The incoming `tracestate`, passed on as is. */
  readonly traceState?: string | undefined;
  /** Whether the parent came from another process. */
  readonly isRemote: boolean;
}

/**
 * When the process's monotonic clock started, in Unix milliseconds. It does not change, and Node's
 * `performance.timeOrigin` getter computes (and allocates) it again on every read.
 */
const TIME_ORIGIN_MS = performance.timeOrigin;

/** Unix time in milliseconds, with the monotonic clock's fraction. */
export function nowUnixMs(): number {
  return TIME_ORIGIN_MS + performance.now();
}

/** A new random trace id (16 bytes). */
export function newTraceId(): SpanContextId {
  return SpanContextId.random(16);
}

/** A new random span id (8 bytes). */
export function newSpanId(): SpanContextId {
  return SpanContextId.random(8);
}

/** A span of one exchange or one upstream attempt, from its start to its end. */
export class RecordedSpan implements ParentSpan {
  readonly traceId: SpanContextId;
  readonly spanId: SpanContextId;
  readonly parent: ParentSpan | undefined;
  /** The trace state this span's trace came with (what its children pass on). */
  readonly traceState: string | undefined;
  /** As the parent of another span: this process's own. */
  readonly isRemote = false;
  name: string;
  readonly kind: number;
  startMs: number;
  endMs = 0;
  /**
   * The attributes the span starts with, shared with other spans: replaced only by a set that extends
   * it (`PresetAttributes.extended`), never changed in place.
   */
  preset: PresetAttributes | undefined;
  /**
   * The other attributes: keys and values, alternating; a key set twice keeps its last value. They
   * follow the preset ones, and are never one of them.
   */
  readonly attributes: (string | SpanAttributeValue)[] = [];
  statusCode = 0;
  statusMessage: string | undefined;

  constructor(
    traceId: SpanContextId,
    parent: ParentSpan | undefined,
    name: string,
    kind: number,
    preset?: PresetAttributes,
  ) {
    this.traceId = traceId;
    this.spanId = newSpanId();
    this.parent = parent;
    this.traceState = parent?.traceState;
    this.name = name;
    this.kind = kind;
    this.preset = preset;
    this.startMs = nowUnixMs();
  }

  setAttribute(key: string, value: SpanAttributeValue): void {
    const attributes = this.attributes;
    for (let index = 0; index < attributes.length; index += 2) {
      if (attributes[index] === key) {
        attributes[index + 1] = value;
        return;
      }
    }
    attributes.push(key, value);
  }

  /** Marks the span as failed, with a message for the reader. */
  setError(message: string): void {
    this.statusCode = STATUS_CODE_ERROR;
    this.statusMessage = message;
  }

  /** This span as the parent of another (in this process): the span itself, no copy. */
  asParent(): ParentSpan {
    return this;
  }
}
