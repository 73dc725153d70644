/**
 * A tool call's arguments → the `tool_use` input, by one set of rules for both wires, whole answers and
 * streams alike: the input is a JSON object, or the call is refused (`MODEL_EPROTO`) rather than run with
 * made-up input — except after the output limit cut the answer, when arguments that stop mid-JSON are
 * completed by appending only (`completeCutJson`), as Anthropic delivers a `tool_use` its own limit cut.
 *
 * Weak models write arguments that are almost JSON (single quotes, trailing commas, comments, raw
 * newlines in strings, Python's `True`/`None`): those are repaired by `jsonrepair`, and string scalars are
 * fitted to the tool's `input_schema` where that is unambiguous (`"3"` for an integer, `"true"` for a
 * boolean) — see {@link readToolArguments}. Nothing is ever added: a missing field stays missing.
 *
 * @module
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { jsonrepair } from 'jsonrepair';
import { isObject } from '../protocol/is-object.js';
import { parseExactJson, stringifyExactJson } from '../protocol/exact-json.js';
import { JSON_TOO_DEEP, MAX_JSON_DEPTH, scanJsonText } from '../protocol/json-nesting-depth.js';
import { completeCutJson } from './complete-cut-json.js';
import { describeType, excerpt, excerptOf, protocolError } from './protocol-error.js';

/** Identifies a tool call in error messages. */
export interface ToolCallDescription {
  /** Position among the answer's tool calls (or the stream's, in order of appearance). */
  position: number;
  name: string | undefined;
  id: string | undefined;
}

/** "tool call #1 (name "get_weather", id "call_1")", for error messages. */
export function describeToolCall(call: ToolCallDescription): string {
  const details = [
    call.name === undefined ? 'no name' : `name ${JSON.stringify(call.name)}`,
    call.id === undefined ? 'no id' : `id ${JSON.stringify(call.id)}`,
  ];
  return `tool call #${call.position} (${details.join(', ')})`;
}

/**
 * The tool input for a call's `arguments`: a JSON object string is parsed; an object is taken as is;
 * `""`, whitespace, `null` and absent give `{}`.
 *
 * @throws TransportError `MODEL_EPROTO` naming the call for malformed JSON or JSON that is not an object.
 */
export function parseToolInput(argumentsValue: unknown, call: ToolCallDescription): Record<string, unknown> {
  if (argumentsValue === undefined || argumentsValue === null) return {};
  if (typeof argumentsValue !== 'string') {
    if (isObject(argumentsValue)) return argumentsValue;
    throw protocolError(
      `${describeToolCall(call)} has arguments that are ${describeType(argumentsValue)}, not a JSON object: ${excerptOf(argumentsValue)}`,
    );
  }
  return parseToolArgumentsText(argumentsValue, call);
}

/**
 * Like `parseToolInput`, for a call the output limit may have cut: string arguments are completed by
 * {@link cutArgumentsCompletion} before they are parsed.
 */
export function parseCutToolInput(
  argumentsValue: unknown,
  call: ToolCallDescription,
): Record<string, unknown> {
  if (typeof argumentsValue !== 'string') return parseToolInput(argumentsValue, call);
  return parseToolArgumentsText(argumentsValue + cutArgumentsCompletion(argumentsValue, call), call);
}

/**
 * What to append to the arguments of a call the output limit may have cut, so that they form a JSON
 * object: `''` when they already do (or are blank, which means `{}`), else `completeCutJson`'s suffix.
 *
 * @throws TransportError `MODEL_EPROTO` naming the call when the text is not even the beginning of a
 *   JSON object: no cut explains that.
 */
export function cutArgumentsCompletion(text: string, call: ToolCallDescription): string {
  if (!/\S/.test(text)) return '';
  const suffix = completeCutJson(text);
  if (suffix === undefined) {
    throw protocolError(
      `${describeToolCall(call)} has arguments that are not the beginning of a JSON object: ${excerpt(text)}`,
    );
  }
  return suffix;
}

/** Like `parseToolInput`, for arguments already joined into one string. */
export function parseToolArgumentsText(text: string, call: ToolCallDescription): Record<string, unknown> {
  if (!/\S/.test(text)) return {};
  const flags = scanJsonText(text);
  if ((flags & JSON_TOO_DEEP) !== 0) {
    throw protocolError(
      `${describeToolCall(call)} has arguments that nest more than ${MAX_JSON_DEPTH} levels deep`,
    );
  }
  let value: unknown;
  try {
    value = parseExactJson(text, flags);
  } catch (error) {
    throw protocolError(
      `${describeToolCall(call)} has arguments that are not valid JSON: ${excerpt(text)}`,
      error,
    );
  }
  if (!isObject(value)) {
    throw protocolError(
      `${describeToolCall(call)} has arguments that are ${describeType(value)}, not a JSON object: ${excerpt(text)}`,
    );
  }
  return value;
}

/** The request's tool input schemas, by the tool name the provider was given (see `toolInputSchemas`). */
export type ToolInputSchemas = ReadonlyMap<string, unknown>;

/** What was done to a call's arguments to make them its input; `none` when they stood as they came. */
export type ToolInputRepair = 'none' | 'syntax' | 'types' | 'syntax+types';

/** A call's arguments, read: the input, and the JSON text that gives it. */
export interface ToolArgumentsReading {
  input: Record<string, unknown>;
  /** What was done to the arguments (for the proxy's debug log). */
  repair: ToolInputRepair;
  /**
   * After a `length` cut, what completes arguments that stop mid-JSON, by appending only (`''` when
   * nothing is needed, and always `''` for repaired arguments, whose `replacement` is whole).
   */
  completion: string;
  /** The JSON text to deliver instead of the arguments, when they were repaired or fitted. */
  replacement: string | undefined;
  /** The repaired text before its scalars were fitted: a fallback for a stream that already sent a part. */
  unfitted: string | undefined;
}

/** Options of {@link readToolArguments}. */
export interface ReadToolArgumentsOptions {
  /** Whether the output limit cut the answer (then arguments that stop mid-JSON are completed). */
  isCut: boolean;
  /** The tool's `input_schema`, when the request declared one under the call's name. */
  schema: unknown;
  /** Told of each call whose arguments were repaired or fitted (metrics, the debug log). */
  onRepair?: ((repair: ToolRepair) => void) | undefined;
}

/** What reading a call's arguments takes from the answer's context: the tools' schemas, and who hears of repairs. */
export interface ToolReading {
  /** The request's tool input schemas by upstream name. @default none: arguments are only repaired */
  toolSchemas?: ToolInputSchemas | undefined;
  /** Told of each tool call that was repaired, fitted or read from text (metrics, the debug log). */
  onRepair?: ((repair: ToolRepair) => void) | undefined;
}

/** A repair made to a tool call, as reported to `onRepair`: the tool's upstream name and what was done. */
export interface ToolRepair {
  tool: string;
  /** `text-call`: the call was written as text (`text-tool-calls.ts`); the others: see `ToolInputRepair`. */
  kind: Exclude<ToolInputRepair, 'none'> | 'text-call';
}

/**
 * A call's arguments as its input. In order: a JSON object is taken as is; JSON that merely stops is a
 * cut (completed after a `length` finish, as before, else refused); text that is not even the beginning
 * of JSON is repaired by `jsonrepair`. Then string scalars are fitted to `schema` where unambiguous.
 *
 * @throws TransportError `MODEL_EPROTO` naming the call when no rule gives a JSON object — never a silent
 *   `{}`.
 */
export function readToolArguments(
  argumentsValue: unknown,
  call: ToolCallDescription,
  options: ReadToolArgumentsOptions,
): ToolArgumentsReading {
  let input: Record<string, unknown>;
  let completion = '';
  let repaired: string | undefined;
  if (typeof argumentsValue !== 'string') {
    input = parseToolInput(argumentsValue, call);
  } else {
    const text = argumentsValue;
    const strict = tryParseObject(text, call);
    if (strict !== undefined) {
      input = strict;
    } else if (completeCutJson(text) !== undefined) {
      // Strict JSON that stops: a cut, handled as it always was (completed after `length`, else refused).
      completion = options.isCut ? cutArgumentsCompletion(text, call) : '';
      input = parseToolArgumentsText(text + completion, call);
    } else {
      repaired = repairJson(text);
      const value = repaired === undefined ? undefined : tryParseObject(repaired, call);
      if (value === undefined || inventsNulls(text, value)) {
        // Beyond repair: refused as it always was, by the rule that applies (these calls throw).
        if (options.isCut) cutArgumentsCompletion(text, call);
        parseToolArgumentsText(text, call);
        throw protocolError(
          `${describeToolCall(call)} has arguments that are not valid JSON: ${excerpt(text)}`,
        );
      }
      input = value;
    }
  }
  const fitted = fitScalars(input, options.schema);
  const repair: ToolInputRepair =
    repaired !== undefined
      ? fitted === undefined
        ? 'syntax'
        : 'syntax+types'
      : fitted === undefined
        ? 'none'
        : 'types';
  if (repair !== 'none' && options.onRepair !== undefined) {
    options.onRepair({ tool: call.name ?? '', kind: repair });
  }
  return {
    input: fitted ?? input,
    repair,
    completion,
    replacement: fitted !== undefined ? stringifyExactJson(fitted) : repaired,
    unfitted: repaired ?? (typeof argumentsValue === 'string' ? argumentsValue + completion : undefined),
  };
}

/** `text` parsed, when it is a JSON object (blank text is `{}`); `undefined` when it is anything else. */
function tryParseObject(text: string, call: ToolCallDescription): Record<string, unknown> | undefined {
  if (!/\S/.test(text)) return {};
  try {
    if (!isObject(JSON.parse(text))) return undefined;
  } catch {
    return undefined;
  }
  // Parsed again, exactly and within the depth limit, only in the usual case of a JSON object.
  return parseToolArgumentsText(text, call);
}

/**
 * Whether a repair filled a value the model never wrote (`{"a":}` → `{"a":null}`): it holds more `null`s
 * than the text has words for one. Words inside strings count too, which only errs towards trusting.
 */
function inventsNulls(text: string, value: unknown): boolean {
  const written = text.match(/\b(null|None|undefined|NULL|nil)\b/g)?.length ?? 0;
  let nulls = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (next === null) nulls++;
    else if (Array.isArray(next)) pending.push(...(next as unknown[]));
    else if (isObject(next)) pending.push(...Object.values(next));
  }
  return nulls > written;
}

/**
 * `text` as JSON, else as `jsonrepair` repairs it (single quotes, trailing commas, comments…) when the
 * repair invents no value; `undefined` when neither gives one.
 */
export function parseLenientJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const repaired = repairJson(text);
    if (repaired === undefined) return undefined;
    try {
      const value: unknown = JSON.parse(repaired);
      return inventsNulls(text, value) ? undefined : value;
    } catch {
      return undefined;
    }
  }
}

/** `jsonrepair`'s repair of `text`, or `undefined` when it found nothing to make of it. */
function repairJson(text: string): string | undefined {
  try {
    return jsonrepair(text);
  } catch {
    return undefined;
  }
}

/** The request's tool schemas by upstream tool name, for {@link readToolArguments}. */
export function toolInputSchemas(
  tools: readonly { name: string; input_schema?: unknown }[],
  toUpstream: (name: string) => string,
): ToolInputSchemas {
  const schemas = new Map<string, unknown>();
  for (const tool of tools) {
    if (isObject(tool.input_schema)) schemas.set(toUpstream(tool.name), tool.input_schema);
  }
  return schemas;
}

// Every request brings its tools' schemas anew, so validators are kept by the schema's text, compiled
// only when a call of that tool arrives; a schema Ajv cannot compile fits nothing. Bounded: a process
// that sees ever new schemas starts over rather than growing.
const validators = new Map<string, ValidateFunction | null>();
const MAX_VALIDATORS = 256;
let ajv: Ajv | undefined;

function validatorFor(schema: object): ValidateFunction | undefined {
  const key = JSON.stringify(schema);
  let validator = validators.get(key);
  if (validator === undefined) {
    ajv ??= new Ajv({ coerceTypes: true, strict: false, allErrors: true, validateSchema: false });
    try {
      validator = ajv.compile(schema);
    } catch {
      validator = null;
    }
    // Ajv keeps every schema it compiled (and refuses a second with the same `$id`): this cache is the
    // only one.
    ajv.removeSchema(schema);
    if (validators.size >= MAX_VALIDATORS) validators.clear();
    validators.set(key, validator);
  }
  return validator ?? undefined;
}

/**
 * `input` with string scalars that the schema wants as numbers or booleans converted, or `undefined`
 * when nothing changes. Ajv's `coerceTypes` runs on a copy; of what it changed, only a string that reads
 * exactly as the number (`"3"`, `"2.5"`) or `"true"`/`"false"` is taken — its other coercions (`null`
 * to `0`, numbers to strings…) guess, and a guess is not a repair.
 */
function fitScalars(input: Record<string, unknown>, schema: unknown): Record<string, unknown> | undefined {
  if (!isObject(schema)) return undefined;
  const validate = validatorFor(schema);
  if (validate === undefined) return undefined;
  // Ajv coerces the data it validates in place, so it only ever sees a copy.
  let copy: unknown;
  try {
    copy = JSON.parse(JSON.stringify(input));
  } catch {
    return undefined;
  }
  validate(copy);
  const merged = takeFittedScalars(input, copy);
  return merged.changed ? (merged.value as Record<string, unknown>) : undefined;
}

/** `original` with each scalar `coerced` fitted unambiguously; structure and every other value kept. */
function takeFittedScalars(original: unknown, coerced: unknown): { value: unknown; changed: boolean } {
  if (typeof original === 'string') {
    const fits =
      (typeof coerced === 'number' && String(coerced) === original) ||
      (typeof coerced === 'boolean' && String(coerced) === original);
    return fits ? { value: coerced, changed: true } : { value: original, changed: false };
  }
  if (Array.isArray(original)) {
    if (!Array.isArray(coerced) || coerced.length !== original.length)
      return { value: original, changed: false };
    let changed = false;
    const value = original.map((item: unknown, index) => {
      const result = takeFittedScalars(item, coerced[index]);
      changed ||= result.changed;
      return result.value;
    });
    return changed ? { value, changed } : { value: original, changed: false };
  }
  if (isObject(original) && isObject(coerced) && Object.getPrototypeOf(original) === Object.prototype) {
    let changed = false;
    // Built from entries, so that a `__proto__` key stays a key.
    const value = Object.fromEntries(
      Object.entries(original).map(([key, item]) => {
        const result = takeFittedScalars(item, Object.hasOwn(coerced, key) ? coerced[key] : undefined);
        changed ||= result.changed;
        return [key, result.value];
      }),
    );
    return changed ? { value, changed } : { value: original, changed: false };
  }
  return { value: original, changed: false };
}
