import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ExactNumber } from '../protocol/exact-json.js';
import { isObject } from '../protocol/is-object.js';
import { cleanToolSchema } from './clean-tool-schema.js';

const gemini = (schema: Record<string, unknown>) => cleanToolSchema(schema, 'gemini-subset');

/** The fields of Google's function-declaration `Schema` that the cleaning keeps. */
const SCHEMA_FIELDS = new Set([
  'type',
  'nullable',
  'description',
  'title',
  'default',
  'enum',
  'format',
  'anyOf',
  'properties',
  'required',
  'propertyOrdering',
  'minProperties',
  'maxProperties',
  'items',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
]);
const TYPES = ['string', 'number', 'integer', 'boolean', 'array', 'object'];

/**
 * Every place in a cleaned schema where Google's subset would refuse it, as `path: reason`; `[]` when
 * none. Walks schema positions only (property names and `default` values are data, not keywords).
 */
function refusals(schema: unknown, path = '$'): string[] {
  if (!isObject(schema)) return [`${path}: not a schema object`];
  const found: string[] = [];
  for (const key of Object.keys(schema)) {
    if (!SCHEMA_FIELDS.has(key)) found.push(`${path}: unknown keyword ${key}`);
  }
  const { type, enum: values, required, properties, items, anyOf } = schema;
  if (type !== undefined && !(typeof type === 'string' && TYPES.includes(type))) {
    found.push(`${path}: type ${JSON.stringify(type)}`);
  }
  if (values !== undefined) {
    if (type !== 'string') found.push(`${path}: enum on type ${String(type)}`);
    if (!Array.isArray(values) || !values.every((value) => typeof value === 'string')) {
      found.push(`${path}: enum of non-strings`);
    }
  }
  const format = schema['format'];
  const formats: Record<string, string[]> = {
    string: ['enum', 'date-time'],
    integer: ['int32', 'int64'],
    number: ['float', 'double'],
  };
  if (format !== undefined && !(typeof type === 'string' && formats[type]?.includes(format as string))) {
    found.push(`${path}: format ${JSON.stringify(format)} on type ${JSON.stringify(type)}`);
  }
  if (required !== undefined) {
    const names = isObject(properties) ? Object.keys(properties) : [];
    for (const name of required as unknown[]) {
      if (typeof name !== 'string' || !names.includes(name))
        found.push(`${path}: required ${String(name)} undefined`);
    }
  }
  if (properties !== undefined) {
    if (!isObject(properties)) found.push(`${path}: properties not an object`);
    else
      for (const [name, child] of Object.entries(properties))
        found.push(...refusals(child, `${path}.properties[${JSON.stringify(name)}]`));
  }
  if (items !== undefined) found.push(...refusals(items, `${path}.items`));
  if (anyOf !== undefined) {
    if (!Array.isArray(anyOf)) found.push(`${path}: anyOf not an array`);
    else anyOf.forEach((member, index) => found.push(...refusals(member, `${path}.anyOf[${index}]`)));
  }
  return found;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}

/** Any JSON, kept small: the cleaning reads none of it as a schema unless a keyword says so. */
const junk = fc.jsonValue({ maxDepth: 2 });

/** JSON Schema as tool authors write it: every keyword the cleaning handles, nested, with junk mixed in. */
const jsonSchema: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  schema: fc.oneof(
    { maxDepth: 4, depthSize: 'small', withCrossShrink: true },
    fc.boolean(),
    fc.record(
      {
        $schema: fc.constant('https://json-schema.org/draft/2020-12/schema'),
        $id: fc.string(),
        $ref: fc.constantFrom(
          '#',
          '#/$defs/a',
          '#/definitions/b',
          '#/properties/x',
          '#/nope',
          'other.json',
          '#a',
        ),
        $defs: fc.dictionary(fc.constantFrom('a', 'b'), tie('schema'), { maxKeys: 2 }),
        definitions: fc.dictionary(fc.constantFrom('a', 'b'), tie('schema'), { maxKeys: 2 }),
        type: fc.oneof(
          fc.constantFrom(...TYPES, 'null', 'date'),
          fc.array(fc.constantFrom(...TYPES, 'null')),
          junk,
        ),
        nullable: junk,
        description: fc.oneof(fc.string(), junk),
        title: fc.string(),
        default: junk,
        const: junk,
        enum: fc.oneof(fc.array(fc.oneof(fc.string(), fc.constant(null))), junk),
        format: fc.constantFrom('date-time', 'enum', 'uri', 'int32', 'double', 'email'),
        anyOf: fc.array(tie('schema'), { maxLength: 2 }),
        oneOf: fc.array(tie('schema'), { maxLength: 2 }),
        allOf: fc.array(tie('schema'), { maxLength: 2 }),
        not: tie('schema'),
        properties: fc.dictionary(fc.constantFrom('x', 'y', 'type', '$ref', '__proto__'), tie('schema')),
        required: fc.oneof(fc.array(fc.constantFrom('x', 'y', 'z', 'type')), junk),
        additionalProperties: tie('schema'),
        patternProperties: fc.dictionary(fc.string(), tie('schema')),
        items: fc.oneof(tie('schema'), fc.array(tie('schema'), { maxLength: 2 })),
        minItems: fc.oneof(fc.nat(), junk),
        maxLength: fc.oneof(fc.nat(), fc.double()),
        minimum: fc.oneof(fc.double(), junk),
        exclusiveMinimum: fc.double(),
        examples: fc.array(junk),
        pattern: fc.string(),
      },
      { requiredKeys: [] },
    ),
    junk,
  ),
})).schema;

/** A tool's schema: an object at the top, anything JSON or JSON Schema below. */
const toolSchema = fc.oneof(jsonSchema.filter(isObject), fc.dictionary(fc.string(), junk)) as fc.Arbitrary<
  Record<string, unknown>
>;

describe('cleanToolSchema: as-is', () => {
  it('gives back the caller schema itself, $schema and all', () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      additionalProperties: false,
    };
    expect(cleanToolSchema(schema, 'as-is')).toBe(schema);
  });
});

describe('cleanToolSchema: gemini-subset', () => {
  it("drops $schema, $id, additionalProperties and the other keywords outside Google's subset", () => {
    expect(
      gemini({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $id: 'urn:tool',
        type: 'object',
        properties: {
          path: { type: 'string', description: 'A file', examples: ['a.txt'], $comment: 'x' },
          limit: { type: 'integer', exclusiveMinimum: 0, multipleOf: 1, minimum: 1, maximum: 100 },
          tags: { type: 'array', items: { type: 'string' }, uniqueItems: true, minItems: 1 },
        },
        required: ['path'],
        additionalProperties: false,
        patternProperties: { '^x-': { type: 'string' } },
      }),
    ).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string', description: 'A file' },
        limit: { type: 'integer', minimum: 1, maximum: 100 },
        tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
      },
      required: ['path'],
    });
  });

  it('keeps property names that look like keywords', () => {
    expect(
      gemini({ type: 'object', properties: { $schema: { type: 'string' }, type: { type: 'string' } } }),
    ).toEqual({ type: 'object', properties: { $schema: { type: 'string' }, type: { type: 'string' } } });
  });

  it('inlines $ref to $defs and definitions, the reference keeping its own description', () => {
    expect(
      gemini({
        type: 'object',
        $defs: { Point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] } },
        definitions: { Unit: { type: 'string', enum: ['m', 'ft'] } },
        properties: {
          at: { $ref: '#/$defs/Point', description: 'Where' },
          unit: { $ref: '#/definitions/Unit' },
        },
      }),
    ).toEqual({
      type: 'object',
      properties: {
        at: { type: 'object', description: 'Where', properties: { x: { type: 'number' } }, required: ['x'] },
        unit: { type: 'string', enum: ['m', 'ft'] },
      },
    });
  });

  it('cuts a definition that refers to itself after one level, keeping its type and description', () => {
    expect(
      gemini({
        $defs: {
          Node: {
            type: 'object',
            description: 'A tree node',
            properties: { children: { type: 'array', items: { $ref: '#/$defs/Node' } } },
          },
        },
        $ref: '#/$defs/Node',
      }),
    ).toEqual({
      type: 'object',
      description: 'A tree node',
      properties: {
        children: { type: 'array', items: { type: 'object', description: 'A tree node' } },
      },
    });
  });

  it('drops a $ref it cannot resolve and keeps the rest of the schema', () => {
    expect(
      gemini({ type: 'object', properties: { a: { $ref: 'https://example.com/a.json', description: 'A' } } }),
    ).toEqual({ type: 'object', properties: { a: { description: 'A' } } });
  });

  it('turns a type array with null into one type and nullable', () => {
    expect(gemini({ type: 'object', properties: { name: { type: ['string', 'null'] } } })).toEqual({
      type: 'object',
      properties: { name: { type: 'string', nullable: true } },
    });
  });

  it('turns a type array of several types into anyOf, each with the keywords of its type', () => {
    expect(gemini({ type: ['string', 'integer'], description: 'Id', maxLength: 8, minimum: 0 })).toEqual({
      description: 'Id',
      anyOf: [
        { type: 'string', maxLength: 8 },
        { type: 'integer', minimum: 0 },
      ],
    });
  });

  it('lifts the one alternative left of an anyOf or oneOf with null, as nullable', () => {
    expect(
      gemini({ anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }], description: 'When' }),
    ).toEqual({
      type: 'string',
      format: 'date-time',
      description: 'When',
      nullable: true,
    });
    expect(gemini({ oneOf: [{ type: 'integer' }, { type: 'string' }] })).toEqual({
      anyOf: [{ type: 'integer' }, { type: 'string' }],
    });
  });

  it('merges allOf into one schema', () => {
    expect(
      gemini({
        allOf: [
          { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
          { properties: { b: { type: 'number' } }, required: ['b'] },
        ],
      }),
    ).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'number' } },
      required: ['a', 'b'],
    });
  });

  it('sends a string const as a one-value enum, and drops enums of other values', () => {
    expect(gemini({ const: 'fixed' })).toEqual({ type: 'string', enum: ['fixed'] });
    expect(gemini({ type: 'integer', enum: [1, 2] })).toEqual({ type: 'integer' });
    expect(gemini({ type: 'boolean', const: true })).toEqual({ type: 'boolean' });
    expect(gemini({ type: ['string', 'null'], enum: ['a', 'b', null] })).toEqual({
      type: 'string',
      nullable: true,
      enum: ['a', 'b'],
    });
  });

  it('keeps only the formats Google takes for the type', () => {
    expect(gemini({ type: 'string', format: 'uri' })).toEqual({ type: 'string' });
    expect(gemini({ type: 'string', format: 'date-time' })).toEqual({ type: 'string', format: 'date-time' });
    expect(gemini({ type: 'integer', format: 'int64' })).toEqual({ type: 'integer', format: 'int64' });
    expect(gemini({ type: 'number', format: 'int64' })).toEqual({ type: 'number' });
  });

  it('drops required names that are not properties, and properties whose schema is false', () => {
    expect(
      gemini({ type: 'object', properties: { a: true, b: false }, required: ['a', 'b', 'c', 'a'] }),
    ).toEqual({ type: 'object', properties: { a: {} }, required: ['a'] });
  });

  it('reads a tuple items as alternatives for every item', () => {
    expect(gemini({ type: 'array', items: [{ type: 'string' }, { type: 'number' }] })).toEqual({
      type: 'array',
      items: { anyOf: [{ type: 'string' }, { type: 'number' }] },
    });
  });

  it('keeps numbers written beyond double precision', () => {
    const big = new ExactNumber('123456789012345678901234567890');
    expect(gemini({ type: 'integer', maximum: big })).toEqual({ type: 'integer', maximum: big });
  });

  it('inlines at most 10 000 schemas from references, whatever the definitions', () => {
    // Each definition refers to the next twice: 2^21 schemas without a bound.
    const defs: Record<string, unknown> = { d20: { type: 'string' } };
    for (let level = 0; level < 20; level += 1) {
      const next = { $ref: `#/$defs/d${level + 1}` };
      defs[`d${level}`] = { type: 'object', properties: { a: next, b: next } };
    }
    const cleaned = gemini({ $defs: defs, $ref: '#/$defs/d0' });
    const schemas = JSON.stringify(cleaned).split('"type":').length - 1;
    expect(schemas).toBeGreaterThan(1000);
    expect(schemas).toBeLessThanOrEqual(10_100);
    expect(refusals(cleaned)).toEqual([]);
  });

  it('leaves no keyword, type, enum, format or required name Google refuses, for any schema', () => {
    fc.assert(
      fc.property(toolSchema, (schema) => {
        expect(refusals(gemini(schema))).toEqual([]);
      }),
    );
  });

  it('gives the same schema when cleaning a cleaned one', () => {
    fc.assert(
      fc.property(toolSchema, (schema) => {
        const once = gemini(schema);
        expect(gemini(once)).toEqual(once);
      }),
    );
  });

  it('never throws and never changes the caller schema', () => {
    fc.assert(
      fc.property(toolSchema, (schema) => {
        const before = structuredClone(schema);
        deepFreeze(schema);
        gemini(schema);
        expect(schema).toEqual(before);
      }),
    );
  });

  it('cuts schemas nested deeper than 64 levels instead of overflowing the stack', () => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let level = 0; level < 100_000; level += 1) schema = { type: 'array', items: schema };
    const cleaned = gemini(schema);
    let arrays = 0;
    let node: unknown = cleaned;
    for (; isObject(node) && node['type'] === 'array'; node = node['items']) arrays += 1;
    expect(arrays).toBe(64);
    expect(node).toEqual({});
  });
});
