/**
 * Span attributes as OTLP `KeyValue` fields: the fields kept for copying are byte for byte what a fresh
 * encoding writes, for every kind of value, whether the pair is seen for the first time, again, or past
 * the bounds on what is kept.
 */
import { describe, expect, it } from 'vitest';
import { KeyValueFields, writeAttributes } from '../../src/server/otlp-attributes.js';
import { ProtobufWriter } from '../../src/server/protobuf-writer.js';
import type { SpanAttributeValue } from '../../src/server/recorded-span.js';
import { decodeTraceRequest } from '../helpers/otlp-protobuf.js';

type Attributes = (string | SpanAttributeValue)[];

function fresh(field: number, attributes: Attributes): Buffer {
  const writer = new ProtobufWriter(16);
  writeAttributes(writer, field, attributes);
  return writer.bytes();
}

function kept(fields: KeyValueFields, attributes: Attributes): Buffer {
  const writer = new ProtobufWriter(16);
  fields.write(writer, attributes);
  return writer.bytes();
}

const EXCHANGE: Attributes = [
  'gen_ai.operation.name',
  'chat',
  'gen_ai.provider.name',
  'openai-compatible',
  'http.response.status_code',
  200,
  'tpx.ratio',
  0.25,
  'tpx.negative',
  -5,
  'tpx.flag',
  true,
  'gen_ai.response.finish_reasons',
  ['end_turn'],
  'gen_ai.request.model',
  'a model name longer than one hundred and twenty-eight bytes, '.repeat(3),
];

describe('KeyValueFields', () => {
  it('writes the bytes of a fresh encoding, the first time and every time after', () => {
    const fields = new KeyValueFields(9);
    const expected = fresh(9, EXCHANGE);
    expect(kept(fields, EXCHANGE)).toStrictEqual(expected);
    expect(kept(fields, EXCHANGE)).toStrictEqual(expected);
    // Scalars are kept, arrays are not.
    expect(fields.size).toBe(EXCHANGE.length / 2 - 1);
  });

  it('keeps each value of a key apart, and values of different types apart', () => {
    const fields = new KeyValueFields(9);
    const attributes: Attributes = [
      'status',
      200,
      'status',
      '200',
      'status',
      404,
      'model',
      'a',
      'model',
      'b',
    ];
    expect(kept(fields, attributes)).toStrictEqual(fresh(9, attributes));
    const reordered: Attributes = ['model', 'b', 'model', 'a', 'status', 404, 'status', '200', 'status', 200];
    expect(kept(fields, reordered)).toStrictEqual(fresh(9, reordered));
  });

  it('keeps a frozen array by identity, and writes an array that is not frozen afresh each time', () => {
    const fields = new KeyValueFields(9);
    const shared = Object.freeze(['end_turn']);
    const withShared: Attributes = ['gen_ai.response.finish_reasons', shared];
    const expected = fresh(9, withShared);
    expect(kept(fields, withShared)).toStrictEqual(expected);
    expect(fields.size).toBe(1);
    expect(kept(fields, withShared)).toStrictEqual(expected);
    expect(fields.size).toBe(1);
    // The same reasons in an array of their own: the same bytes, nothing more kept.
    const unshared: Attributes = ['gen_ai.response.finish_reasons', ['end_turn']];
    expect(kept(fields, unshared)).toStrictEqual(expected);
    expect(fields.size).toBe(1);
    const other: Attributes = ['gen_ai.response.finish_reasons', Object.freeze(['max_tokens', 'stop'])];
    expect(kept(fields, other)).toStrictEqual(fresh(9, other));
    expect(fields.size).toBe(2);
  });

  it('past its bounds keeps nothing more and still writes every attribute exactly', () => {
    const fields = new KeyValueFields(1, { maxKeys: 2, maxValuesPerKey: 3 });
    const attributes: Attributes = [];
    for (let index = 0; index < 10; index++) attributes.push('tpx.request_id', `req_${index}`);
    for (let index = 0; index < 5; index++) attributes.push(`key.${index}`, index);
    attributes.push('tpx.request_id', ['an', 'array']);
    expect(kept(fields, attributes)).toStrictEqual(fresh(1, attributes));
    expect(kept(fields, attributes)).toStrictEqual(fresh(1, attributes));
    // Three request ids, and the first value of the one other key kept.
    expect(fields.size).toBe(4);
  });

  it('writes fields an OTLP reader decodes to the attributes given', () => {
    const fields = new KeyValueFields(1);
    // As the attributes of a `Resource` (field 1 of `ResourceSpans`, field 1 of the request).
    const writer = new ProtobufWriter();
    const resourceSpans = writer.beginMessage(1);
    const resource = writer.beginMessage(1);
    fields.write(writer, EXCHANGE.slice(0, 8));
    fields.write(writer, EXCHANGE.slice(8));
    writer.endMessage(resource);
    writer.endMessage(resourceSpans);
    const decoded = decodeTraceRequest(writer.bytes()) as {
      resourceSpans: { resource: { attributes: { key: string; value: Record<string, unknown> }[] } }[];
    };
    expect(decoded.resourceSpans[0]!.resource.attributes.map((attribute) => attribute.key)).toStrictEqual(
      EXCHANGE.filter((_, index) => index % 2 === 0),
    );
    expect(decoded.resourceSpans[0]!.resource.attributes[2]!.value).toStrictEqual({ intValue: '200' });
  });
});
