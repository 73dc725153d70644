/**
 * A tool call's arguments → the `tool_use` input, by one set of rules for both wires, whole answers and
 * streams alike: the input is a JSON object, or the call is refused (`MODEL_EPROTO`) rather than run with
 * made-up input — except after the output limit cut the answer, when arguments that stop mid-JSON are
 * completed by appending only (`completeCutJson`), as Anthropic delivers a `tool_use` its own limit cut.
 *
 * @module
 */
import { isObject } from '../protocol/is-object.js';
import { parseExactJson } from '../protocol/exact-json.js';
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
