/**
 * The OTLP encoding of recorded spans, read back with an independent reader (protobufjs, against the
 * OTLP schema) for protobuf and `JSON.parse` for JSON: both encodings carry every field of a span the
 * same way, exactly (ids, parent, trace state, times to the nanosecond, each kind of attribute value,
 * status, flags), whatever the sizes of strings and batches.
 */
import { describe, expect, it } from 'vitest';
import { newSpanBatch, unixNanos, type TraceExportOrigin } from '../../src/server/otlp-trace-encoding.js';
import {
  RecordedSpan,
  SPAN_KIND_CLIENT,
  SPAN_KIND_SERVER,
  newSpanId,
  newTraceId,
} from '../../src/server/recorded-span.js';
import { PresetAttributes } from '../../src/server/preset-attributes.js';
import { SpanContextId } from '../../src/server/span-context-id.js';
import { decodeTraceRequest } from '../helpers/otlp-protobuf.js';

/** The id a test spells in hex. */
function id(hex: string): SpanContextId {
  const parsed = SpanContextId.fromHex(hex);
  if (parsed === undefined) throw new Error(`not an id: ${hex}`);
  return parsed;
}

const ORIGIN: TraceExportOrigin = {
  resourceAttributes: [
    ['service.name', 'tpx-under-test'],
    ['deployment.replicas', 3],
  ],
  scopeName: 'tpx-transport',
  scopeVersion: '1.2.3',
};

interface Decoded {
  resourceSpans: {
    resource: { attributes: unknown[] };
    scopeSpans: { scope: { name: string; version?: string }; spans: Record<string, unknown>[] }[];
  }[];
}

/** The request of a batch holding `spans`, read back from each encoding. */
function readBack(spans: RecordedSpan[]): { protobuf: Decoded; json: Decoded } {
  const protobuf = newSpanBatch('http/protobuf', ORIGIN, spans.length);
  const json = newSpanBatch('http/json', ORIGIN, spans.length);
  for (const span of spans) {
    protobuf.add(span);
    json.add(span);
  }
  expect(protobuf.count).toBe(spans.length);
  expect(json.count).toBe(spans.length);
  return {
    protobuf: decodeTraceRequest(protobuf.request()) as Decoded,
    json: JSON.parse(Buffer.from(json.request()).toString('utf8')) as Decoded,
  };
}

function spansIn(request: Decoded): Record<string, unknown>[] {
  return request.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans));
}

/** An exchange span continuing a remote caller, with every kind of attribute value, failed. */
function exchangeSpan(): RecordedSpan {
  const span = new RecordedSpan(
    id('4bf92f3577b34da6a3ce929d0e0e4736'),
    {
      traceId: id('4bf92f3577b34da6a3ce929d0e0e4736'),
      spanId: id('00f067aa0ba902b7'),
      traceState: 'vendor=a,other=b',
      isRemote: true,
    },
    'chat claude-test',
    SPAN_KIND_SERVER,
  );
  span.startMs = 1_764_633_600_123.25;
  span.endMs = 1_764_633_601_000.5;
  span.setAttribute('gen_ai.request.model', 'claude-test');
  span.setAttribute('gen_ai.usage.input_tokens', 1234);
  span.setAttribute('tpx.negative', -5);
  span.setAttribute('tpx.ratio', 0.25);
  span.setAttribute('tpx.flag', true);
  span.setAttribute('gen_ai.response.finish_reasons', ['end_turn', 'tool_use']);
  span.setAttribute('gen_ai.request.model', 'claude-replaced');
  span.setError('the upstream answered 504');
  return span;
}

const EXPECTED_EXCHANGE = {
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  traceState: 'vendor=a,other=b',
  parentSpanId: '00f067aa0ba902b7',
  // Sampled, with a parent whose remoteness is known, and remote.
  flags: 0x301,
  name: 'chat claude-test',
  kind: 2,
  startTimeUnixNano: '1764633600123250000',
  endTimeUnixNano: '1764633601000500000',
  attributes: [
    { key: 'gen_ai.request.model', value: { stringValue: 'claude-replaced' } },
    { key: 'gen_ai.usage.input_tokens', value: { intValue: '1234' } },
    { key: 'tpx.negative', value: { intValue: '-5' } },
    { key: 'tpx.ratio', value: { doubleValue: 0.25 } },
    { key: 'tpx.flag', value: { boolValue: true } },
    {
      key: 'gen_ai.response.finish_reasons',
      value: { arrayValue: { values: [{ stringValue: 'end_turn' }, { stringValue: 'tool_use' }] } },
    },
  ],
  status: { code: 2, message: 'the upstream answered 504' },
};

describe('OTLP trace encoding', () => {
  it('carries every field of a span, and the same in protobuf and in JSON', () => {
    const exchange = exchangeSpan();
    const attempt = new RecordedSpan(
      exchange.traceId,
      exchange.asParent(),
      'chat attempt 1',
      SPAN_KIND_CLIENT,
    );
    attempt.startMs = 1_764_633_600_200;
    attempt.endMs = 1_764_633_600_999.875;
    attempt.setAttribute('tpx.attempt', 1);
    const { protobuf, json } = readBack([exchange, attempt]);
    for (const request of [protobuf, json]) {
      const [first, second] = spansIn(request);
      expect(first).toStrictEqual({ ...EXPECTED_EXCHANGE, spanId: exchange.spanId.hex });
      expect(second).toStrictEqual({
        traceId: exchange.traceId.hex,
        spanId: attempt.spanId.hex,
        // The exchange's trace state goes on with its trace.
        traceState: 'vendor=a,other=b',
        parentSpanId: exchange.spanId.hex,
        flags: 0x101,
        name: 'chat attempt 1',
        kind: 3,
        startTimeUnixNano: '1764633600200000000',
        endTimeUnixNano: '1764633600999875000',
        attributes: [{ key: 'tpx.attempt', value: { intValue: '1' } }],
        ...(request === json ? { status: {} } : {}),
      });
      const resource = request.resourceSpans[0]!;
      expect(resource.resource.attributes).toStrictEqual([
        { key: 'service.name', value: { stringValue: 'tpx-under-test' } },
        { key: 'deployment.replicas', value: { intValue: '3' } },
      ]);
      expect(resource.scopeSpans[0]!.scope).toStrictEqual({ name: 'tpx-transport', version: '1.2.3' });
    }
  });

  it('writes a root span without parent, trace state or status', () => {
    const span = new RecordedSpan(newTraceId(), undefined, 'chat', SPAN_KIND_SERVER);
    span.endMs = span.startMs + 1;
    const { protobuf } = readBack([span]);
    const [decoded] = spansIn(protobuf);
    expect(decoded).toStrictEqual({
      traceId: span.traceId.hex,
      spanId: span.spanId.hex,
      flags: 0x101,
      name: 'chat',
      kind: 2,
      startTimeUnixNano: String(unixNanos(span.startMs)),
      endTimeUnixNano: String(unixNanos(span.endMs)),
    });
  });

  it('keeps long and multi-byte strings whole, and every span of a batch far larger than a length byte holds', () => {
    const long = `${'é'.repeat(70)}🙂${'x'.repeat(20_000)}`;
    const spans = Array.from({ length: 600 }, (_, index) => {
      const span = new RecordedSpan(newTraceId(), undefined, `chat model-${index}`, SPAN_KIND_SERVER);
      span.setAttribute('tpx.request_id', `req_${index}`);
      if (index === 7) span.setAttribute('tpx.long', long);
      span.endMs = span.startMs;
      return span;
    });
    const { protobuf, json } = readBack(spans);
    for (const request of [protobuf, json]) {
      const decoded = spansIn(request);
      expect(decoded.map((span) => span['name'])).toStrictEqual(spans.map((span) => span.name));
      expect(decoded.map((span) => span['spanId'])).toStrictEqual(spans.map((span) => span.spanId.hex));
      expect(decoded[7]!['attributes']).toContainEqual({ key: 'tpx.long', value: { stringValue: long } });
    }
  });

  it('leaves nothing of a span that failed to encode in the batch, in either encoding', () => {
    const named = (name: string) => {
      const span = new RecordedSpan(newTraceId(), undefined, name, SPAN_KIND_SERVER);
      span.setAttribute('tpx.request_id', `req_${name}`);
      span.endMs = span.startMs;
      return span;
    };
    const broken = named('broken');
    // A value of no attribute type (a bug elsewhere), met after the span's first fields are written.
    broken.attributes.push('tpx.bad', {} as unknown as string);
    for (const protocol of ['http/protobuf', 'http/json'] as const) {
      const batch = newSpanBatch(protocol, ORIGIN, 3);
      batch.add(named('before'));
      expect(() => batch.add(broken)).toThrow(TypeError);
      batch.add(named('after'));
      expect(batch.count).toBe(2);
      const body = batch.request();
      const request =
        protocol === 'http/json'
          ? (JSON.parse(Buffer.from(body).toString('utf8')) as Decoded)
          : (decodeTraceRequest(body) as Decoded);
      expect(spansIn(request).map((span) => span['name'])).toStrictEqual(['before', 'after']);
    }
  });

  it('writes preset attributes first, as if each had been set on the span, and shares them between spans', () => {
    const preset = new PresetAttributes(['gen_ai.operation.name', 'chat', 'tpx.attempt', 2]);
    const spans = ['first', 'second'].map((name) => {
      const span = new RecordedSpan(newTraceId(), undefined, name, SPAN_KIND_SERVER, preset);
      span.setAttribute('tpx.request_id', `req_${name}`);
      span.endMs = span.startMs;
      return span;
    });
    const { protobuf, json } = readBack(spans);
    for (const request of [protobuf, json]) {
      expect(spansIn(request).map((span) => span['attributes'])).toStrictEqual(
        ['first', 'second'].map((name) => [
          { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
          { key: 'tpx.attempt', value: { intValue: '2' } },
          { key: 'tpx.request_id', value: { stringValue: `req_${name}` } },
        ]),
      );
    }
  });

  // Times a double holds exactly (binary fractions of a millisecond): the encoding adds no error of its own.
  it('writes Unix nanoseconds exactly at second boundaries and far from now', () => {
    const times = [0, 999.999999, 1000, 1_764_633_599_999.75, 4_102_444_800_000.5];
    const spans = times.map((ms) => {
      const span = new RecordedSpan(newTraceId(), undefined, 'chat', SPAN_KIND_SERVER);
      span.startMs = ms;
      span.endMs = ms;
      return span;
    });
    const decoded = spansIn(readBack(spans).protobuf);
    expect(decoded.map((span) => span['startTimeUnixNano'] ?? '0')).toStrictEqual([
      '0',
      '999999999',
      '1000000000',
      '1764633599999750000',
      '4102444800000500000',
    ]);
  });
});

describe('span ids', () => {
  it('are lower-case hex of the W3C lengths, never all zero, and do not repeat', () => {
    const traceIds = new Set(Array.from({ length: 2000 }, () => newTraceId().hex));
    const spanIds = new Set(Array.from({ length: 2000 }, () => newSpanId().hex));
    expect(traceIds.size).toBe(2000);
    expect(spanIds.size).toBe(2000);
    for (const id of traceIds) expect(id).toMatch(/^(?!0{32})[0-9a-f]{32}$/);
    for (const id of spanIds) expect(id).toMatch(/^(?!0{16})[0-9a-f]{16}$/);
  });
});
