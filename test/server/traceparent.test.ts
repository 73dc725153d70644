/**
 * The `traceparent` header sent upstream: W3C trace context version 00, spelled from the ids' bytes.
 */
import { describe, expect, it } from 'vitest';
import { SpanContextId } from '../../src/server/span-context-id.js';
import { formatTraceparent } from '../../src/server/traceparent.js';

const traceId = SpanContextId.fromHex('4bf92f3577b34da6a3ce929d0e0e4736')!;
const spanId = SpanContextId.fromHex('00f067aa0ba902b7')!;

describe('formatTraceparent', () => {
  it('spells version 00, the trace id, the span id and the sampled flag', () => {
    expect(formatTraceparent(traceId, spanId, true)).toBe(
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    );
    expect(formatTraceparent(traceId, spanId, false)).toBe(
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00',
    );
  });

  it('spells random ids as their hex, each header its own string', () => {
    const headers = Array.from({ length: 50 }, () => {
      const trace = SpanContextId.random(16);
      const span = SpanContextId.random(8);
      return { header: formatTraceparent(trace, span, true), expected: `00-${trace.hex}-${span.hex}-01` };
    });
    for (const { header, expected } of headers) expect(header).toBe(expected);
  });
});
