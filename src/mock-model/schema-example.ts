/**
 * Builds example tool-call arguments from a tool's JSON Schema `parameters`, for the mock model's
 * default tool calls. The result is deterministic: the same schema always gives the same arguments.
 *
 * | schema                          | example value                                                  |
 * |---------------------------------|----------------------------------------------------------------|
 * | `const`, `enum`                 | the constant, the first enum member                            |
 * | `default`, `examples`, `example`| that value (in this order, after `const`/`enum`)               |
 * | `string`                        | by `format` (`date-time`, `date`, `email`, `uri`, …), else `"example"`, fitted to `minLength`/`maxLength` |
 * | `number`                        | 2, then 3, 4, … for each further number in the same arguments, kept within the bounds |
 * | `integer`                       | 3, then 4, 5, … likewise, so that `add(a, b)` gets two different numbers |
 * | `boolean` / `null`              | `false` / `null` (a flag left off: never `dangerouslyDisableSandbox: true`) |
 * | `object`                        | the required properties only (optional ones are left out, as a careful caller would) |
 * | `array`                         | one item (or `minItems` items, at most 5); `prefixItems` item by item |
 * | `anyOf` / `oneOf`               | the first branch that is not just `{"type":"null"}`            |
 * | `allOf`                         | the branches merged (properties and `required` combined)       |
 * | type list `["string","null"]`   | the first type that is not `null`                              |
 *
 * `$ref` is not resolved (tool schemas are normally self-contained); a `$ref` gives `"example"`.
 *
 * @module
 */

import { isObject } from '../protocol/is-object.js';

const MAX_ARRAY_ITEMS = 5;
/** Nesting beyond this depth gives empty objects and arrays, so a deep schema cannot blow up the reply. */
const MAX_DEPTH = 8;

interface ExampleContext {
  /** How many numbers have been produced so far: each next number differs from the last. */
  numbers: number;
}

type Schema = Record<string, unknown>;

/**
 * Example arguments for a tool whose `parameters` are `schema`: always an object.
 *
 * @example
 * exampleArguments({
 *   type: 'object',
 *   properties: { a: { type: 'integer' }, b: { type: 'integer' } },
 *   required: ['a', 'b'],
 * }) // → { a: 3, b: 4 }
 */
export function exampleArguments(schema: unknown): Record<string, unknown> {
  const value = exampleValue(schema, { numbers: 0 }, 0);
  return isObject(value) ? value : {};
}

/** An example value valid for `schema` (as far as the table in the module comment goes). */
export function exampleValue(schema: unknown, context: ExampleContext = { numbers: 0 }, depth = 0): unknown {
  if (!isObject(schema)) return 'example';
  if ('const' in schema) return schema['const'];
  const members = schema['enum'];
  if (Array.isArray(members) && members.length > 0) return members[0] as unknown;
  if ('default' in schema && schema['default'] !== undefined) return schema['default'];
  const examples = schema['examples'];
  if (Array.isArray(examples) && examples.length > 0) return examples[0] as unknown;
  if ('example' in schema && schema['example'] !== undefined) return schema['example'];

  const branch = firstBranch(schema['anyOf']) ?? firstBranch(schema['oneOf']);
  if (branch !== undefined) return exampleValue(branch, context, depth + 1);
  const allOf = schema['allOf'];
  if (Array.isArray(allOf) && allOf.length > 0) {
    const { allOf: _ignored, ...rest } = schema;
    return exampleValue(mergeSchemas([rest, ...allOf.filter(isObject)]), context, depth + 1);
  }

  const type = schemaType(schema);
  switch (type) {
    case 'string':
      return exampleString(schema);
    case 'number':
      return exampleNumber(schema, context, false);
    case 'integer':
      return exampleNumber(schema, context, true);
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'object':
      return exampleObject(schema, context, depth);
    case 'array':
      return exampleArray(schema, context, depth);
    default:
      return 'example';
  }
}

/** The schema's type: declared, first non-null of a list, or inferred from the keywords present. */
function schemaType(schema: Schema): string {
  const declared = schema['type'];
  if (typeof declared === 'string') return declared;
  if (Array.isArray(declared)) {
    const types = declared.filter((item): item is string => typeof item === 'string');
    return types.find((item) => item !== 'null') ?? types[0] ?? 'string';
  }
  if ('properties' in schema || 'required' in schema || 'additionalProperties' in schema) return 'object';
  if ('items' in schema || 'prefixItems' in schema) return 'array';
  return 'string';
}

function firstBranch(branches: unknown): Schema | undefined {
  if (!Array.isArray(branches)) return undefined;
  const candidates = branches.filter(isObject);
  return candidates.find((branch) => branch['type'] !== 'null') ?? candidates[0];
}

function mergeSchemas(schemas: readonly Schema[]): Schema {
  const merged: Schema = {};
  const properties: Schema = {};
  const required: string[] = [];
  for (const schema of schemas) {
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'properties' && isObject(value)) Object.assign(properties, value);
      else if (key === 'required' && Array.isArray(value)) {
        for (const name of value)
          if (typeof name === 'string' && !required.includes(name)) required.push(name);
      } else if (!(key in merged)) merged[key] = value;
    }
  }
  if (Object.keys(properties).length > 0) merged['properties'] = properties;
  if (required.length > 0) merged['required'] = required;
  return merged;
}

const STRING_FORMATS: Readonly<Record<string, string>> = {
  'date-time': '2026-01-01T12:00:00Z',
  date: '2026-01-01',
  time: '12:00:00Z',
  duration: 'PT1H',
  email: 'user@example.com',
  hostname: 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
};

function exampleString(schema: Schema): string {
  const format = schema['format'];
  let text = (typeof format === 'string' ? STRING_FORMATS[format] : undefined) ?? 'example';
  const minLength = nonNegativeInteger(schema['minLength']);
  const maxLength = nonNegativeInteger(schema['maxLength']);
  if (minLength !== undefined && text.length < minLength) text = text.padEnd(minLength, 'x');
  if (maxLength !== undefined && text.length > maxLength) text = text.slice(0, maxLength);
  return text;
}

function exampleNumber(schema: Schema, context: ExampleContext, isInteger: boolean): number {
  let value = (isInteger ? 3 : 2) + context.numbers;
  context.numbers += 1;
  // Exclusive bounds are moved inwards by a step so that the clamped value satisfies them.
  const step = isInteger ? 1 : 0.5;
  const lower = maxDefined(finite(schema['minimum']), shift(finite(schema['exclusiveMinimum']), step));
  const upper = minDefined(finite(schema['maximum']), shift(finite(schema['exclusiveMaximum']), -step));
  if (lower !== undefined && value < lower) value = isInteger ? Math.ceil(lower) : lower;
  if (upper !== undefined && value > upper) value = isInteger ? Math.floor(upper) : upper;
  return value;
}

function exampleObject(schema: Schema, context: ExampleContext, depth: number): Record<string, unknown> {
  if (depth >= MAX_DEPTH) return {};
  const properties = isObject(schema['properties']) ? schema['properties'] : {};
  const requiredList = Array.isArray(schema['required']) ? schema['required'] : [];
  const required = requiredList.filter((name): name is string => typeof name === 'string');
  // Properties in their declared order, then required names missing from `properties`, which still need
  // a value: `additionalProperties` is their schema.
  const chosen = Object.keys(properties).filter((name) => required.includes(name));
  for (const name of required) if (!chosen.includes(name)) chosen.push(name);
  const result: Record<string, unknown> = {};
  for (const name of chosen) {
    const propertySchema = name in properties ? properties[name] : schema['additionalProperties'];
    result[name] = exampleValue(propertySchema, context, depth + 1);
  }
  return result;
}

function exampleArray(schema: Schema, context: ExampleContext, depth: number): unknown[] {
  if (depth >= MAX_DEPTH) return [];
  const prefixItems = schema['prefixItems'];
  const items = schema['items'];
  // Draft 2020-12 tuples use `prefixItems`; older drafts put the tuple in `items` itself.
  const tuple = Array.isArray(prefixItems) ? prefixItems : Array.isArray(items) ? items : undefined;
  if (tuple !== undefined) return tuple.map((item: unknown) => exampleValue(item, context, depth + 1));
  const maxItems = nonNegativeInteger(schema['maxItems']);
  const minItems = nonNegativeInteger(schema['minItems']) ?? 0;
  const count = Math.min(Math.max(1, minItems), MAX_ARRAY_ITEMS, maxItems ?? MAX_ARRAY_ITEMS);
  return Array.from({ length: count }, () => exampleValue(items, context, depth + 1));
}

function finite(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function nonNegativeInteger(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

function shift(value: number | undefined, by: number): number | undefined {
  return value === undefined ? undefined : value + by;
}

function maxDefined(first: number | undefined, second: number | undefined): number | undefined {
  if (first === undefined) return second;
  return second === undefined ? first : Math.max(first, second);
}

function minDefined(first: number | undefined, second: number | undefined): number | undefined {
  if (first === undefined) return second;
  return second === undefined ? first : Math.min(first, second);
}
