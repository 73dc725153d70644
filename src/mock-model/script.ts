/**
 * The script of `tpx mock-model`: exact replies the server gives, in order, before it falls back to its
 * default behaviour. A script is plain JSON so that it can live in a file next to a user's tests:
 *
 * ```json
 * { "replies": [
 *   { "tool_calls": [{ "name": "get_weather", "arguments": { "city": "Paris" } }] },
 *   { "text": "It is sunny in Paris." },
 *   { "error": { "status": 429, "headers": { "retry-after": "1" } } }
 * ] }
 * ```
 *
 * `parseMockScript` checks such a value field by field and names the exact path of the first problem
 * (`replies[2].error.status: expected an integer from 200 to 599, got "429"`), so a typo in a script
 * file fails at start-up instead of producing a puzzling reply later.
 *
 * @module
 */

import { isObject } from '../protocol/is-object.js';

/** Timing fields that every reply may carry. */
export interface MockReplyTiming {
  /** Milliseconds to wait before sending the response headers. */
  delay_ms?: number;
  /** Milliseconds between stream chunks for this reply; overrides the server's `chunkDelayMs`. */
  chunk_delay_ms?: number;
}

/** A plain text answer, optionally preceded by reasoning (sent as `reasoning_content`). */
export interface MockTextReply extends MockReplyTiming {
  text: string;
  reasoning?: string;
  /** @default 'stop' */
  finish_reason?: string;
}

/** One scripted tool call. */
export interface MockScriptedToolCall {
  /** The tool-call id to send. @default a fresh `call_…` id from the server's counter */
  id?: string;
  /** The function name. */
  name: string;
  /** An object (sent JSON-encoded) or a raw string (sent exactly as given, even if it is not JSON). */
  arguments: Record<string, unknown> | string;
}

/** An answer that calls tools, optionally after some text and reasoning. */
export interface MockToolCallsReply extends MockReplyTiming {
  tool_calls: MockScriptedToolCall[];
  text?: string;
  reasoning?: string;
  /** @default 'tool_calls' */
  finish_reason?: string;
}

/** An HTTP error response instead of a completion. */
export interface MockErrorReply extends MockReplyTiming {
  error: {
    /** The HTTP status, 200–599. */
    status: number;
    /** Extra response headers, such as `retry-after`. */
    headers?: Record<string, string>;
    /**
     * The response body: any JSON value, sent as JSON, or a string, sent as it is (`text/plain` unless
     * `headers` says otherwise). @default an OpenAI-shaped error body for `status`
     */
    body?: unknown;
  };
}

/**
 * A stream that starts normally (HTTP 200) and then carries an error chunk, `data: {"error": …}`,
 * followed by `data: [DONE]`. A non-streaming request gets HTTP 500 with `{"error": …}` instead.
 */
export interface MockStreamErrorReply extends MockReplyTiming {
  stream_error: {
    /** How many chunks of the reply (the first, role-carrying chunk included) precede the error. @default 2 */
    after_chunks?: number;
    /** The error object put in the chunk. @default an OpenAI-shaped `server_error` */
    error?: Record<string, unknown>;
  };
  /** Content of the chunks before the error. @default 'This answer is cut short by a scripted error.' */
  text?: string;
  reasoning?: string;
  tool_calls?: MockScriptedToolCall[];
}

/** One scripted reply. */
export type MockReply = MockTextReply | MockToolCallsReply | MockErrorReply | MockStreamErrorReply;

/** A script: replies served in order, one per chat completion request. */
export interface MockScript {
  replies: MockReply[];
}

/** A reply tagged with its kind, in the order the kinds are recognised. */
export type ClassifiedReply =
  | { kind: 'error'; reply: MockErrorReply }
  | { kind: 'stream_error'; reply: MockStreamErrorReply }
  | { kind: 'tool_calls'; reply: MockToolCallsReply }
  | { kind: 'text'; reply: MockTextReply };

/** Tells the reply kinds apart; `parseMockScript` guarantees exactly one kind key is present. */
export function classifyReply(reply: MockReply): ClassifiedReply {
  if ('error' in reply) return { kind: 'error', reply };
  if ('stream_error' in reply) return { kind: 'stream_error', reply };
  if ('tool_calls' in reply) return { kind: 'tool_calls', reply };
  return { kind: 'text', reply };
}

/**
 * Checks a script's JSON and returns a copy typed as `MockScript`.
 *
 * @throws Error whose message starts with `mock script: ` and names the offending path.
 *
 * @example
 * parseMockScript({ replies: [{ text: 'hi' }] })      // → { replies: [{ text: 'hi' }] }
 * parseMockScript({ replies: [{ txt: 'hi' }] })
 * // throws: mock script: replies[0]: unknown key "txt" (a reply has "text", "tool_calls", "error" or "stream_error")
 */
export function parseMockScript(json: unknown): MockScript {
  const root = expectObject(json, '(root)');
  checkKeys(root, '(root)', ['replies']);
  if (!('replies' in root)) fail('(root)', 'missing key "replies"');
  const replies = root['replies'];
  if (!Array.isArray(replies)) fail('replies', `expected an array, got ${describe(replies)}`);
  return { replies: replies.map((reply: unknown, index) => parseReply(reply, `replies[${index}]`)) };
}

const KIND_KEYS = ['error', 'stream_error', 'tool_calls', 'text'] as const;
const TIMING_KEYS = ['delay_ms', 'chunk_delay_ms'] as const;
const ALLOWED_KEYS: Record<(typeof KIND_KEYS)[number], readonly string[]> = {
  error: ['error', ...TIMING_KEYS],
  stream_error: ['stream_error', 'text', 'reasoning', 'tool_calls', ...TIMING_KEYS],
  tool_calls: ['tool_calls', 'text', 'reasoning', 'finish_reason', ...TIMING_KEYS],
  text: ['text', 'reasoning', 'finish_reason', ...TIMING_KEYS],
};

function parseReply(value: unknown, path: string): MockReply {
  const reply = expectObject(value, path);
  const kind = KIND_KEYS.find((key) => key in reply);
  if (kind === undefined) {
    const extra = Object.keys(reply)[0];
    const hint = 'a reply has "text", "tool_calls", "error" or "stream_error"';
    fail(path, extra === undefined ? `empty reply (${hint})` : `unknown key "${extra}" (${hint})`);
  }
  const allowed = ALLOWED_KEYS[kind];
  for (const key of Object.keys(reply)) {
    if (allowed.includes(key)) continue;
    const known =
      (KIND_KEYS as readonly string[]).includes(key) || key === 'finish_reason' || key === 'reasoning';
    fail(path, known ? `"${key}" cannot be combined with "${kind}"` : `unknown key "${key}"`);
  }
  const timing = parseTiming(reply, path);
  switch (kind) {
    case 'error':
      return { error: parseHttpError(reply['error'], `${path}.error`), ...timing };
    case 'stream_error':
      return {
        stream_error: parseStreamError(reply['stream_error'], `${path}.stream_error`),
        ...optionalString(reply, 'text', path),
        ...optionalString(reply, 'reasoning', path),
        ...('tool_calls' in reply
          ? { tool_calls: parseToolCalls(reply['tool_calls'], `${path}.tool_calls`) }
          : {}),
        ...timing,
      };
    case 'tool_calls':
      return {
        tool_calls: parseToolCalls(reply['tool_calls'], `${path}.tool_calls`),
        ...optionalString(reply, 'text', path),
        ...optionalString(reply, 'reasoning', path),
        ...optionalFinishReason(reply, path),
        ...timing,
      };
    case 'text':
      return {
        text: expectString(reply['text'], `${path}.text`),
        ...optionalString(reply, 'reasoning', path),
        ...optionalFinishReason(reply, path),
        ...timing,
      };
    default: {
      const unreachable: never = kind;
      return unreachable;
    }
  }
}

function parseTiming(reply: Record<string, unknown>, path: string): MockReplyTiming {
  const timing: MockReplyTiming = {};
  for (const key of TIMING_KEYS) {
    if (key in reply) timing[key] = expectDuration(reply[key], `${path}.${key}`);
  }
  return timing;
}

function parseHttpError(value: unknown, path: string): MockErrorReply['error'] {
  const error = expectObject(value, path);
  checkKeys(error, path, ['status', 'headers', 'body']);
  const status = error['status'];
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599) {
    fail(`${path}.status`, `expected an integer from 200 to 599, got ${describe(status)}`);
  }
  const parsed: MockErrorReply['error'] = { status };
  if ('headers' in error) {
    const headersPath = `${path}.headers`;
    const headers = expectObject(error['headers'], headersPath);
    const copy: Record<string, string> = {};
    for (const [name, headerValue] of Object.entries(headers)) {
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
        fail(headersPath, `"${name}" is not a valid header name`);
      const text = expectString(headerValue, `${headersPath}.${name}`);
      if (/[\r\n]/.test(text)) fail(`${headersPath}.${name}`, 'a header value cannot contain a line break');
      copy[name.toLowerCase()] = text;
    }
    parsed.headers = copy;
  }
  if ('body' in error) parsed.body = error['body'];
  return parsed;
}

function parseStreamError(value: unknown, path: string): MockStreamErrorReply['stream_error'] {
  const streamError = expectObject(value, path);
  checkKeys(streamError, path, ['after_chunks', 'error']);
  const parsed: MockStreamErrorReply['stream_error'] = {};
  if ('after_chunks' in streamError) {
    const count = streamError['after_chunks'];
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) {
      fail(`${path}.after_chunks`, `expected a whole number of chunks (0 or more), got ${describe(count)}`);
    }
    parsed.after_chunks = count;
  }
  if ('error' in streamError) parsed.error = { ...expectObject(streamError['error'], `${path}.error`) };
  return parsed;
}

function parseToolCalls(value: unknown, path: string): MockScriptedToolCall[] {
  if (!Array.isArray(value)) fail(path, `expected an array, got ${describe(value)}`);
  if (value.length === 0) fail(path, 'expected at least one tool call');
  return value.map((item: unknown, index) => {
    const callPath = `${path}[${index}]`;
    const call = expectObject(item, callPath);
    checkKeys(call, callPath, ['id', 'name', 'arguments']);
    if (!('name' in call)) fail(callPath, 'missing key "name"');
    if (!('arguments' in call)) fail(callPath, 'missing key "arguments" (use {} for none)');
    const rawArguments = call['arguments'];
    let parsedArguments: MockScriptedToolCall['arguments'];
    if (typeof rawArguments === 'string') parsedArguments = rawArguments;
    else if (isObject(rawArguments)) parsedArguments = { ...rawArguments };
    else fail(`${callPath}.arguments`, `expected an object or a string, got ${describe(rawArguments)}`);
    return {
      ...('id' in call ? { id: expectString(call['id'], `${callPath}.id`) } : {}),
      name: expectString(call['name'], `${callPath}.name`),
      arguments: parsedArguments,
    };
  });
}

function optionalString<Key extends 'text' | 'reasoning'>(
  reply: Record<string, unknown>,
  key: Key,
  path: string,
): Partial<Record<Key, string>> {
  if (!(key in reply)) return {};
  const value = expectString(reply[key], `${path}.${key}`);
  return { [key]: value } as Partial<Record<Key, string>>;
}

function optionalFinishReason(reply: Record<string, unknown>, path: string): { finish_reason?: string } {
  if (!('finish_reason' in reply)) return {};
  const reason = expectString(reply['finish_reason'], `${path}.finish_reason`);
  if (reason === '') fail(`${path}.finish_reason`, 'expected a non-empty string such as "stop" or "length"');
  return { finish_reason: reason };
}

function checkKeys(value: Record<string, unknown>, path: string, allowed: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      const list = allowed.map((name) => `"${name}"`).join(', ');
      fail(path, `unknown key "${key}" (expected ${list})`);
    }
  }
}

function expectObject(value: unknown, path: string): Record<string, unknown> {
  if (!isObject(value)) fail(path, `expected an object, got ${describe(value)}`);
  return value;
}

function expectString(value: unknown, path: string): string {
  if (typeof value !== 'string') fail(path, `expected a string, got ${describe(value)}`);
  return value;
}

function expectDuration(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    fail(path, `expected a number of milliseconds (0 or more), got ${describe(value)}`);
  }
  return value;
}

/** A short rendering of an unexpected value for error messages. */
function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

function fail(path: string, message: string): never {
  throw new Error(`mock script: ${path}: ${message}`);
}
