/**
 * Tool input schemas as an upstream accepts them (`DialectProfile.toolSchemas`, docs/dialects.md). Pure:
 * the caller's schema is never changed; a cleaned schema is a new object (it may share untouched leaf
 * values, such as a `default`, with the input).
 *
 * - `as-is`: the schema the caller wrote, the same object.
 * - `gemini-subset`: Google's function declarations take a `Schema` object, a subset of OpenAPI 3.0, and
 *   answer 400 to the rest (`Invalid JSON payload received. Unknown name "$schema" … Cannot find field.`
 *   for a keyword it does not know; `Invalid value … (type.googleapis.com/…Type)` for a type array;
 *   `only 'enum' and 'date-time' are supported for STRING type`; `enum: only allowed for STRING type`;
 *   `required[0]: property is not defined`). The schema is rewritten into that subset, keeping its
 *   meaning wherever the subset can say it and loosening it where it cannot:
 *
 * | JSON Schema                                   | sent as                                                          |
 * |-----------------------------------------------|------------------------------------------------------------------|
 * | `$ref` to `#/$defs/…`, `#/definitions/…`, `#…` | the definition, inlined (a cycle, or past 10 000 inlined schemas: the definition's `type` and `description` only) |
 * | `allOf: [a, b]`                               | one schema: `properties` and `required` joined, other keywords from the first that has them |
 * | `oneOf`                                       | `anyOf`                                                          |
 * | `type: ["string", "null"]`, `{type: "null"}` in `anyOf` | `type: "string", nullable: true`                       |
 * | `type: ["string", "number"]`                  | `anyOf: [{type: "string"}, {type: "number"}]`                    |
 * | `anyOf` with one member left (after `null`)   | that member, merged into the schema                              |
 * | `const: "x"` (a string)                       | `enum: ["x"]`                                                    |
 * | `enum` with `null` among strings              | the strings, `nullable: true`                                    |
 * | `enum` of other values, `const` of other values | dropped                                                        |
 * | `format` other than `enum`/`date-time` (string), `int32`/`int64` (integer), `float`/`double` (number) | dropped |
 * | `required` naming no property                 | that name dropped                                                |
 * | a property whose schema is `false`            | dropped; `true` becomes `{}`                                     |
 * | tuple `items: [a, b]`                         | `items: {anyOf: [a, b]}`                                         |
 * | keywords of another type (`properties` on a string) | dropped (they constrain nothing)                           |
 * | any other keyword (`$schema`, `$id`, `$defs`, `additionalProperties`, `patternProperties`, `exclusiveMinimum`, `examples`, `not`, `if`, `multipleOf`, `uniqueItems`, …) | dropped |
 * | nesting deeper than 64 schemas                | `{}` below that depth                                            |
 *
 * What is kept: `type`, `nullable`, `description`, `title`, `default`, `enum`, `format`, `anyOf`,
 * `properties`, `required`, `propertyOrdering`, `minProperties`, `maxProperties`, `items`, `minItems`,
 * `maxItems`, `minLength`, `maxLength`, `pattern`, `minimum`, `maximum`: the fields Gemini and Vertex AI
 * document for `Schema`.
 *
 * @module
 */
import { ExactNumber } from '../protocol/exact-json.js';
import { isObject } from '../protocol/is-object.js';

/** How a dialect's tool input schemas are sent (see the module comment). */
export type ToolSchemaStyle = 'as-is' | 'gemini-subset';

/**
 * A tool's input schema as the upstream of `style` accepts it. Never throws, whatever JSON `schema`
 * holds; never changes `schema`. Cleaning a cleaned schema again gives the same schema.
 *
 * @example
 * cleanToolSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object',
 *   properties: { unit: { type: ['string', 'null'], const: 'C' } }, additionalProperties: false },
 *   'gemini-subset')
 * // → { type: 'object', properties: { unit: { type: 'string', nullable: true, enum: ['C'] } } }
 */
export function cleanToolSchema(
  schema: Record<string, unknown>,
  style: ToolSchemaStyle,
): Record<string, unknown> {
  switch (style) {
    case 'as-is':
      return schema;
    case 'gemini-subset':
      return toGemini(schema, { root: schema, refs: [], budget: { inlined: 0 } }, 0);
    default: {
      const unknown: never = style;
      return unknown;
    }
  }
}

/** Schemas nested deeper than this become `{}`: no tool needs more, and recursion stays bounded. */
const MAX_DEPTH = 64;
/**
 * Schemas cleaned inside `$ref` expansions, per tool: past it, a reference is cut as a cycle is. Definitions
 * that each refer to the next twice double at every level; this keeps the sent schema near its written size.
 */
const MAX_INLINED_SCHEMAS = 10_000;

const TYPES: ReadonlySet<string> = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object']);

/** The keywords that only constrain a value of one type (or of the numeric two). */
const KEYWORDS_OF_TYPE: Readonly<Record<string, readonly string[]>> = {
  string: ['minLength', 'maxLength', 'pattern'],
  number: ['minimum', 'maximum'],
  integer: ['minimum', 'maximum'],
  array: ['items', 'minItems', 'maxItems'],
  object: ['properties', 'required', 'propertyOrdering', 'minProperties', 'maxProperties'],
};

/** The keywords about the value as a whole, whatever its type: kept on the schema, not on each alternative. */
const UNIVERSAL_KEYWORDS: readonly string[] = ['description', 'title', 'default', 'nullable'];

const FORMATS_OF_TYPE: Readonly<Record<string, readonly string[]>> = {
  string: ['enum', 'date-time'],
  integer: ['int32', 'int64'],
  number: ['float', 'double'],
};

interface Context {
  /** The tool's whole schema, where `#/…` references point. */
  readonly root: Record<string, unknown>;
  /** The references being expanded around this point, outermost first. */
  readonly refs: readonly string[];
  /** Schemas cleaned inside a `$ref` expansion so far: shared by every branch of one cleaning. */
  readonly budget: { inlined: number };
}

/** One schema position, cleaned: its reference inlined, its `allOf` merged, then its keywords read. */
function toGemini(value: unknown, context: Context, depth: number): Record<string, unknown> {
  if (!isObject(value) || value instanceof ExactNumber || depth >= MAX_DEPTH) return {};
  if (context.refs.length > 0) context.budget.inlined += 1;
  const inlined = inlineRef(value, context);
  const source = mergeAllOf(inlined.schema, inlined.context, depth);
  return cleanSchema(source, inlined.context, depth);
}

/**
 * The keywords of one schema (references inlined, `allOf` merged) in Google's subset: types and
 * alternatives first (a type list or `null` alternative becomes `nullable`, a lone alternative the
 * schema itself), then the keywords every type shares, then those of the schema's type.
 */
function cleanSchema(
  source: Record<string, unknown>,
  context: Context,
  depth: number,
): Record<string, unknown> {
  const types = readTypes(source['type']);
  const enumeration = readEnum(source);
  let nullable = source['nullable'] === true || types.nullable || enumeration.nullable;
  let type = types.names.length === 1 ? types.names[0] : undefined;

  // The schema without its alternatives: what a lone alternative is merged into.
  const base = withoutKeys(source, ['type', 'anyOf', 'oneOf']);
  const choices =
    types.names.length > 1
      ? types.names.map((name) => ({ ...withoutKeys(base, UNIVERSAL_KEYWORDS), type: name }))
      : [...arrayOf(source['anyOf']), ...arrayOf(source['oneOf'])];
  const members: Record<string, unknown>[] = [];
  const kept: unknown[] = [];
  for (const choice of choices) {
    if (choice === false) continue;
    const member = toGemini(choice, context, depth + 1);
    if (isNullOnly(member)) {
      nullable = true;
    } else {
      members.push(member);
      kept.push(choice);
    }
  }
  if (members.length === 1 && type === undefined) {
    // One alternative left: it is the schema (`anyOf: [X, {type: "null"}]` → X, nullable).
    const lone = inlineRef(kept[0], context);
    const merged: Record<string, unknown> = { ...lone.schema, ...base };
    if (nullable) merged['nullable'] = true;
    return toGemini(merged, lone.context, depth + 1);
  }

  if (type === undefined && members.length === 0 && enumeration.values !== undefined) type = 'string';
  const out: Record<string, unknown> = {};
  if (type !== undefined) out['type'] = type;
  if (nullable) out['nullable'] = true;
  for (const key of ['description', 'title'] as const) {
    if (typeof source[key] === 'string') out[key] = source[key];
  }
  if (source['default'] !== undefined) out['default'] = source['default'];
  if (type === 'string' && enumeration.values !== undefined) out['enum'] = enumeration.values;
  const format = source['format'];
  if (typeof format === 'string' && type !== undefined && FORMATS_OF_TYPE[type]?.includes(format)) {
    out['format'] = format;
  }
  if (members.length > 0) out['anyOf'] = members;
  // With several types, each alternative took the keywords of its own type.
  if (types.names.length <= 1) copyTypedKeywords(source, out, type, context, depth);
  return out;
}

/** The keywords of `type` (of every type when it is not known), each checked and cleaned. */
function copyTypedKeywords(
  source: Record<string, unknown>,
  out: Record<string, unknown>,
  type: string | undefined,
  context: Context,
  depth: number,
): void {
  const applies = (key: string) => type === undefined || KEYWORDS_OF_TYPE[type]?.includes(key) === true;
  for (const key of ['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties']) {
    const count = source[key];
    if (applies(key) && isNumber(count) && Number.isInteger(Number(count)) && Number(count) >= 0) {
      out[key] = count;
    }
  }
  for (const key of ['minimum', 'maximum']) {
    if (applies(key) && isNumber(source[key])) out[key] = source[key];
  }
  if (applies('pattern') && typeof source['pattern'] === 'string') out['pattern'] = source['pattern'];
  if (applies('items')) {
    const items = source['items'];
    if (Array.isArray(items)) {
      // A tuple (draft 4 to 2019-09): each position's schema, as alternatives for every item.
      if (items.length > 0) out['items'] = toGemini({ anyOf: items }, context, depth + 1);
    } else if (items === true || isObject(items)) {
      out['items'] = toGemini(items, context, depth + 1);
    }
  }
  if (applies('properties') && isObject(source['properties'])) {
    const entries = Object.entries(source['properties'])
      .filter(([, schema]) => schema !== false)
      .map(([name, schema]) => [name, toGemini(schema, context, depth + 1)] as const);
    const properties = Object.fromEntries(entries);
    out['properties'] = properties;
    for (const key of ['required', 'propertyOrdering']) {
      const names = [...new Set(arrayOf(source[key]))].filter(
        (name): name is string => typeof name === 'string' && Object.hasOwn(properties, name),
      );
      if (names.length > 0) out[key] = names;
    }
  }
}

/** Replaces a local `$ref` by what it points to; the schema's own keywords win over the target's. */
function inlineRef(value: unknown, context: Context): { schema: Record<string, unknown>; context: Context } {
  if (!isObject(value)) return { schema: {}, context };
  let schema = value;
  let current = context;
  for (let ref = schema['$ref']; typeof ref === 'string'; ref = schema['$ref']) {
    const rest: Record<string, unknown> = { ...schema };
    delete rest['$ref'];
    const target = resolvePointer(current.root, ref);
    if (!isObject(target)) return { schema: rest, context: current };
    if (current.refs.includes(ref) || current.budget.inlined >= MAX_INLINED_SCHEMAS) {
      // A definition that contains itself (a tree, a linked list): one level, without its structure.
      const standIn: Record<string, unknown> = {};
      if (typeof target['type'] === 'string') standIn['type'] = target['type'];
      if (typeof target['description'] === 'string') standIn['description'] = target['description'];
      return { schema: { ...standIn, ...rest }, context: current };
    }
    current = { ...current, refs: [...current.refs, ref] };
    schema = { ...target, ...rest };
  }
  return { schema, context: current };
}

/** The value a local JSON pointer (`#/$defs/Name`, RFC 6901 in a URI fragment) names, if any. */
function resolvePointer(root: Record<string, unknown>, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  let tokens: string[];
  try {
    tokens = decodeURIComponent(ref.slice(1)).split('/');
  } catch {
    return undefined;
  }
  if (tokens.shift() !== '') return undefined;
  let node: unknown = root;
  for (const token of tokens) {
    const key = token.replaceAll('~1', '/').replaceAll('~0', '~');
    if (!(isObject(node) || Array.isArray(node)) || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** One schema for `allOf`: `properties` and `required` joined; other keywords from the first with them. */
function mergeAllOf(schema: Record<string, unknown>, context: Context, depth: number) {
  if (!Array.isArray(schema['allOf'])) return schema;
  const merged: Record<string, unknown> = { ...schema };
  delete merged['allOf'];
  for (const part of schema['allOf']) {
    if (depth >= MAX_DEPTH) break;
    const member = mergeAllOf(inlineRef(part, context).schema, context, depth + 1);
    for (const [key, value] of Object.entries(member)) {
      if (key === 'properties' && isObject(value) && isObject(merged['properties'])) {
        merged['properties'] = { ...value, ...merged['properties'] };
      } else if (key === 'required' && Array.isArray(value)) {
        merged['required'] = [...arrayOf(merged['required']), ...(value as unknown[])];
      } else if (!Object.hasOwn(merged, key)) {
        merged[key] = value;
      }
    }
  }
  return merged;
}

/** The named types of a `type` keyword, and whether it admits `null`. */
function readTypes(value: unknown): { names: string[]; nullable: boolean } {
  const listed = Array.isArray(value) ? value : [value];
  const names = [...new Set(listed)].filter(
    (name): name is string => typeof name === 'string' && TYPES.has(name),
  );
  return { names, nullable: listed.includes('null') };
}

/** `enum` (or a string `const`) when every value is a string, `null` aside. */
function readEnum(source: Record<string, unknown>): { values: string[] | undefined; nullable: boolean } {
  const constant = source['const'];
  const listed: unknown[] = Object.hasOwn(source, 'const')
    ? [constant]
    : Array.isArray(source['enum'])
      ? source['enum']
      : [];
  const values = [...new Set(listed.filter((value) => value !== null))];
  const allStrings = values.length > 0 && values.every((value) => typeof value === 'string');
  return {
    values: allStrings ? values : undefined,
    nullable: allStrings && listed.includes(null),
  };
}

/** A cleaned schema that admits only `null` (what `{type: "null"}` becomes). */
function isNullOnly(schema: Record<string, unknown>): boolean {
  return schema['nullable'] === true && schema['type'] === undefined && schema['anyOf'] === undefined;
}

function withoutKeys(source: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const rest = { ...source };
  for (const key of keys) delete rest[key];
  return rest;
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function isNumber(value: unknown): boolean {
  return (typeof value === 'number' && Number.isFinite(value)) || value instanceof ExactNumber;
}
