import { describe, expect, it } from 'vitest';

import { exampleArguments, exampleValue } from './schema-example.js';

describe('exampleArguments', () => {
  it('gives two different numbers to a tool with two numeric parameters', () => {
    const integers = exampleArguments({
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'integer' } },
      required: ['a', 'b'],
    });
    expect(integers).toEqual({ a: 3, b: 4 });
    const numbers = exampleArguments({
      type: 'object',
      properties: { x: { type: 'number' }, y: { type: 'number' } },
      required: ['x', 'y'],
    });
    expect(numbers).toEqual({ x: 2, y: 3 });
  });

  it('prefers const, enum, default and examples over the generic value', () => {
    expect(
      exampleArguments({
        type: 'object',
        properties: {
          kind: { const: 'fixed' },
          unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
          limit: { type: 'integer', default: 10 },
          query: { type: 'string', examples: ['cats'] },
          flag: { type: 'boolean' },
          nothing: { type: 'null' },
        },
        required: ['kind', 'unit', 'limit', 'query', 'flag', 'nothing'],
      }),
    ).toEqual({ kind: 'fixed', unit: 'celsius', limit: 10, query: 'cats', flag: false, nothing: null });
  });

  it('fills strings by format and fits them to their length bounds', () => {
    expect(
      exampleArguments({
        type: 'object',
        properties: {
          when: { type: 'string', format: 'date-time' },
          site: { type: 'string', format: 'uri' },
          code: { type: 'string', maxLength: 3 },
          long: { type: 'string', minLength: 10 },
        },
        required: ['when', 'site', 'code', 'long'],
      }),
    ).toEqual({
      when: '2026-01-01T12:00:00Z',
      site: 'https://example.com/',
      code: 'exa',
      long: 'examplexxx',
    });
  });

  it('keeps numbers within their bounds', () => {
    expect(
      exampleArguments({
        type: 'object',
        properties: {
          small: { type: 'integer', maximum: 1 },
          big: { type: 'integer', exclusiveMinimum: 100 },
          ratio: { type: 'number', minimum: 0, exclusiveMaximum: 1 },
        },
        required: ['small', 'big', 'ratio'],
      }),
    ).toEqual({ small: 1, big: 101, ratio: 0.5 });
  });

  it('recurses into nested objects and arrays', () => {
    expect(
      exampleArguments({
        type: 'object',
        properties: {
          filter: {
            type: 'object',
            properties: {
              tags: { type: 'array', items: { type: 'string' } },
              since: { type: 'string', format: 'date' },
            },
            required: ['tags', 'since'],
          },
          points: { type: 'array', items: { type: 'integer' }, minItems: 2 },
          pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'boolean' }] },
        },
        required: ['filter', 'points', 'pair'],
      }),
    ).toEqual({
      filter: { tags: ['example'], since: '2026-01-01' },
      points: [3, 4],
      pair: ['example', false],
    });
  });

  it('leaves optional properties out and fills booleans with false', () => {
    expect(
      exampleArguments({
        type: 'object',
        properties: {
          command: { type: 'string' },
          dangerouslyDisableSandbox: { type: 'boolean' },
          run_in_background: { type: 'boolean' },
          confirm: { type: 'boolean' },
        },
        required: ['command', 'confirm'],
      }),
    ).toEqual({ command: 'example', confirm: false });
  });

  it('takes only the required properties of a large object', () => {
    const properties = Object.fromEntries(
      ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((name) => [name, { type: 'string' }]),
    );
    expect(exampleArguments({ type: 'object', properties, required: ['c', 'g'] })).toEqual({
      c: 'example',
      g: 'example',
    });
  });

  it('picks the first non-null branch of anyOf and oneOf, and the first non-null of a type list', () => {
    expect(
      exampleArguments({
        type: 'object',
        properties: {
          maybe: { anyOf: [{ type: 'null' }, { type: 'integer' }] },
          either: { oneOf: [{ type: 'boolean' }, { type: 'string' }] },
          listed: { type: ['null', 'string'] },
        },
        required: ['maybe', 'either', 'listed'],
      }),
    ).toEqual({ maybe: 3, either: false, listed: 'example' });
  });

  it('merges the branches of allOf', () => {
    expect(
      exampleArguments({
        allOf: [
          { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
          { properties: { b: { type: 'boolean' } }, required: ['b'] },
        ],
      }),
    ).toEqual({ a: 'example', b: false });
  });

  it('gives an empty object for a missing or non-object schema', () => {
    expect(exampleArguments(undefined)).toEqual({});
    expect(exampleArguments({ type: 'string' })).toEqual({});
    expect(exampleArguments({ type: 'object' })).toEqual({});
  });

  it('stops at a fixed depth instead of following an endless nesting', () => {
    let schema: Record<string, unknown> = { type: 'object', properties: {} };
    for (let level = 0; level < 20; level += 1) {
      schema = { type: 'object', properties: { inner: schema }, required: ['inner'] };
    }
    const value = exampleValue(schema);
    expect(JSON.stringify(value).length).toBeLessThan(200);
  });
});
