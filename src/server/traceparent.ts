/**
 * The W3C trace context `traceparent` header the proxy sends upstream with each attempt
 * (https://www.w3.org/TR/trace-context/#traceparent-header): version `00`, the trace id, the id of the
 * span the upstream's work belongs to, and the sampled flag.
 *
 * Written as ASCII into one buffer straight from the ids' bytes and read out as one string: no hex
 * string per id and no concatenation, for a header made for every observed attempt.
 *
 * @module
 */
import type { SpanContextId } from './span-context-id.js';

/** `00-<32 hex digits>-<16 hex digits>-<2 hex digits>`. */
const LENGTH = 55;
const TRACE_ID_AT = 3;
const SPAN_ID_AT = 36;
const SAMPLED_DIGIT_AT = 54;

/** The fixed parts of every header; the ids and the last flag digit are written over the zeros. */
const scratch = Buffer.from(`00-${'0'.repeat(32)}-${'0'.repeat(16)}-00`, 'latin1');

/**
 * The `traceparent` of span `spanId` of trace `traceId` (a 16-byte and an 8-byte id), sampled or not.
 *
 * ```ts
 * formatTraceparent(traceId, spanId, true); // '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
 * ```
 */
export function formatTraceparent(traceId: SpanContextId, spanId: SpanContextId, isSampled: boolean): string {
  traceId.writeHex(scratch, TRACE_ID_AT);
  spanId.writeHex(scratch, SPAN_ID_AT);
  scratch[SAMPLED_DIGIT_AT] = isSampled ? 0x31 : 0x30;
  return scratch.toString('latin1', 0, LENGTH);
}
