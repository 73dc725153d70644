/**
 * Tool calls a model wrote as text (docs/translation.md › Tool calls written as text). Open models served
 * without their server's tool-call parser (vLLM without `--enable-auto-tool-choice`, llama.cpp without
 * `--jinja`, Ollama with some templates) answer a tool call in the content, in their chat template's own
 * format; the agent would read it as prose and stop. When the request offered tools, an answer whose
 * text is a call in a known format is read as tool calls:
 *
 * | format | written as |
 * |---|---|
 * | Hermes / Qwen | `<tool_call>{"name": …, "arguments": {…}}</tool_call>`, one or several; the last closing tag may be missing |
 * | Mistral | `[TOOL_CALLS][{"name": …, "arguments": {…}}, …]`, or `[TOOL_CALLS]name[ARGS]{…}` (newer templates), one or several |
 * | Llama 3 (bare JSON) | `{"name": …, "parameters" \| "arguments": {…}}` as the whole answer, optionally after `<|python_tag|>` |
 *
 * The rules, the same for a whole answer and a stream:
 *
 * - every call must name an offered tool and carry an object (or a JSON text of one) as its arguments,
 *   else the answer stays text;
 * - text before the first call stays a text block (its trailing white space trimmed); anything but white
 *   space after the last call means the calls were an example in prose, and the whole answer stays text;
 * - a stream holds text back only while it can still become a call (a marker or a possible start of one,
 *   white space before it, or a bare JSON object at the very start), so ordinary text is not delayed.
 *
 * {@link readTextToolCalls} reads a whole text; {@link TextToolCallScanner} reads a stream of pieces and
 * ends with the same result whatever the pieces (its `end` runs `readTextToolCalls` on the whole text;
 * what `push` let out before is always a prefix of that result's text). Pure: no I/O.
 *
 * @module
 */
import { isObject } from '../protocol/is-object.js';
import { parseLenientJson } from './read-tool-input.js';

/** A call read from text: an offered tool's name and its arguments as an object. */
export interface TextToolCall {
  name: string;
  input: Record<string, unknown>;
}

/** A text read for calls: the text that stays text, and the calls after it (none: all text). */
export interface TextWithCalls {
  text: string;
  calls: TextToolCall[];
}

const HERMES_OPEN = '<tool_call>';
const HERMES_CLOSE = '</tool_call>';
const MISTRAL_OPEN = '[TOOL_CALLS]';
const MISTRAL_ARGS = '[ARGS]';
const PYTHON_TAG = '<|python_tag|>';
const MARKERS = [HERMES_OPEN, MISTRAL_OPEN] as const;
const MISTRAL_NAME = /[A-Za-z0-9_.-]+/y;
const SPACE = /\s/;

/** How far a run of calls was read: complete calls, still open (more text may complete it), or not calls. */
type RunReading = { kind: 'calls'; calls: TextToolCall[] } | { kind: 'open' } | { kind: 'invalid' };

const OPEN = { kind: 'open' } as const;
const INVALID = { kind: 'invalid' } as const;

/**
 * The calls in a whole answer's text, by the rules of the module comment; `{text, calls: []}` when it
 * is text.
 *
 * @param offered the tool names the request offered, as the upstream was given them
 */
export function readTextToolCalls(text: string, offered: ReadonlySet<string>): TextWithCalls {
  const bare = readBareCall(text, offered, true);
  if (bare !== undefined && bare.kind === 'calls') return { text: '', calls: bare.calls };
  for (let at = nextMarker(text, 0); at !== -1; at = nextMarker(text, at + 1)) {
    const run = readRun(text, at, offered, true);
    if (run.kind === 'calls') return { text: text.slice(0, at).trimEnd(), calls: run.calls };
  }
  return { text, calls: [] };
}

/** Reads a streamed text piece by piece; see the module comment. */
export class TextToolCallScanner {
  readonly #offered: ReadonlySet<string>;
  #text = '';
  #released = 0;
  #flushed = false;

  constructor(offered: ReadonlySet<string>) {
    this.#offered = offered;
  }

  /** The whole text so far. */
  get text(): string {
    return this.#text;
  }

  /** Adds a piece; returns the text that can go out now (`''` while all of it is held). */
  push(piece: string): string {
    this.#text += piece;
    const safe = this.#safeLength();
    if (safe <= this.#released) return '';
    const out = this.#text.slice(this.#released, safe);
    this.#released = safe;
    return out;
  }

  /** Everything not yet let out, as text: something other than text followed, so no call can end it. */
  flush(): string {
    const rest = this.#text.slice(this.#released);
    this.#released = this.#text.length;
    this.#flushed = true;
    return rest;
  }

  /** The end of the text: the rest of the text that stays text, and the calls. */
  end(): TextWithCalls {
    if (this.#flushed) return { text: this.flush(), calls: [] };
    const { text, calls } = readTextToolCalls(this.#text, this.#offered);
    // What went out is a prefix of `text` by construction (`#safeLength`); the rest follows it.
    const rest = text.slice(this.#released);
    this.#released = this.#text.length;
    return { text: rest, calls };
  }

  /**
   * How much of the text is text whatever comes next: up to the first place a call may still begin, less
   * the white space before it (trimmed if the call comes true). Places already ruled out stay ruled out,
   * so the search starts where the released text ends.
   */
  #safeLength(): number {
    const text = this.#text;
    const from = this.#released;
    if (from === 0) {
      if (text.trim() === '') return 0;
      const bare = readBareCall(text, this.#offered, false);
      if (bare !== undefined && bare.kind !== 'invalid') return 0;
    }
    let hold = text.length;
    for (let at = nextMarker(text, from); ; at = nextMarker(text, at + 1)) {
      if (at === -1) {
        hold = partialMarkerStart(text, from);
        break;
      }
      if (readRun(text, at, this.#offered, false).kind !== 'invalid') {
        hold = at;
        break;
      }
    }
    while (hold > from && SPACE.test(text[hold - 1]!)) hold -= 1;
    return hold;
  }
}

/** The first full marker at or after `from`, or -1. */
function nextMarker(text: string, from: number): number {
  let first = -1;
  for (const marker of MARKERS) {
    const at = text.indexOf(marker, from);
    if (at !== -1 && (first === -1 || at < first)) first = at;
  }
  return first;
}

/** Where a marker cut short by the end of the text begins (`text.length` when none does). */
function partialMarkerStart(text: string, from: number): number {
  const longest = Math.max(...MARKERS.map((marker) => marker.length));
  for (let at = Math.max(from, text.length - longest + 1); at < text.length; at += 1) {
    const tail = text.slice(at);
    if (MARKERS.some((marker) => marker.startsWith(tail))) return at;
  }
  return text.length;
}

/** Whether `text` from `at` is a proper, non-empty start of `word` that ends the text. */
function isCutShort(text: string, at: number, word: string): boolean {
  return at < text.length && word.startsWith(text.slice(at));
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && SPACE.test(text[at]!)) at += 1;
  return at;
}

/**
 * Reads the calls of a run that starts with a marker at `at`, up to the end of the text. `isFinal`: the
 * text is whole (nothing open stays possible).
 */
function readRun(text: string, at: number, offered: ReadonlySet<string>, isFinal: boolean): RunReading {
  const calls: TextToolCall[] = [];
  let position = at;
  for (;;) {
    let section: SectionReading;
    if (text.startsWith(HERMES_OPEN, position)) {
      section = readHermesSection(text, position + HERMES_OPEN.length, offered, isFinal);
    } else if (text.startsWith(MISTRAL_OPEN, position)) {
      section = readMistralSection(text, position + MISTRAL_OPEN.length, offered, isFinal);
    } else if (!isFinal && MARKERS.some((marker) => isCutShort(text, position, marker))) {
      return OPEN;
    } else {
      return INVALID;
    }
    if (section.kind !== 'calls') return section;
    calls.push(...section.calls);
    position = skipSpace(text, section.end);
    if (position === text.length) return isFinal ? { kind: 'calls', calls } : OPEN;
  }
}

type SectionReading =
  { kind: 'calls'; calls: TextToolCall[]; end: number } | { kind: 'open' } | { kind: 'invalid' };

/** `{…}` after `<tool_call>`, then white space and `</tool_call>` (which the last call may lack). */
function readHermesSection(
  text: string,
  at: number,
  offered: ReadonlySet<string>,
  isFinal: boolean,
): SectionReading {
  const start = skipSpace(text, at);
  if (start === text.length) return isFinal ? INVALID : OPEN;
  if (text[start] !== '{') return INVALID;
  const close = matchingClose(text, start);
  if (close === -1) return isFinal ? INVALID : OPEN;
  const call = callOf(parseLenientJson(text.slice(start, close + 1)), offered);
  if (call === undefined) return INVALID;
  let end = skipSpace(text, close + 1);
  if (text.startsWith(HERMES_CLOSE, end)) end += HERMES_CLOSE.length;
  else if (!isFinal && isCutShort(text, end, HERMES_CLOSE)) return OPEN;
  else end = close + 1;
  return { kind: 'calls', calls: [call], end };
}

/** `[{…}, …]` after `[TOOL_CALLS]`, or `name[ARGS]{…}`. */
function readMistralSection(
  text: string,
  at: number,
  offered: ReadonlySet<string>,
  isFinal: boolean,
): SectionReading {
  const start = skipSpace(text, at);
  if (start === text.length) return isFinal ? INVALID : OPEN;
  if (text[start] === '[') {
    const close = matchingClose(text, start);
    if (close === -1) return isFinal ? INVALID : OPEN;
    const list = parseLenientJson(text.slice(start, close + 1));
    if (!Array.isArray(list) || list.length === 0) return INVALID;
    const calls = list.map((item) => callOf(item, offered));
    if (calls.some((call) => call === undefined)) return INVALID;
    return { kind: 'calls', calls: calls as TextToolCall[], end: close + 1 };
  }
  MISTRAL_NAME.lastIndex = start;
  const name = MISTRAL_NAME.exec(text)?.[0];
  if (name === undefined) return INVALID;
  let position = start + name.length;
  if (position === text.length) return isFinal ? INVALID : OPEN;
  if (!text.startsWith(MISTRAL_ARGS, position)) {
    return !isFinal && isCutShort(text, position, MISTRAL_ARGS) ? OPEN : INVALID;
  }
  position = skipSpace(text, position + MISTRAL_ARGS.length);
  if (position === text.length) return isFinal ? INVALID : OPEN;
  if (text[position] !== '{') return INVALID;
  const close = matchingClose(text, position);
  if (close === -1) return isFinal ? INVALID : OPEN;
  const call = callOf({ name, arguments: parseLenientJson(text.slice(position, close + 1)) }, offered);
  return call === undefined ? INVALID : { kind: 'calls', calls: [call], end: close + 1 };
}

/**
 * A bare `{"name", "arguments"|"parameters"}` object as the whole text (after white space and an optional
 * `<|python_tag|>`); `undefined` when the text does not start like one.
 */
function readBareCall(text: string, offered: ReadonlySet<string>, isFinal: boolean): RunReading | undefined {
  let start = skipSpace(text, 0);
  if (text.startsWith(PYTHON_TAG, start)) start = skipSpace(text, start + PYTHON_TAG.length);
  else if (!isFinal && isCutShort(text, start, PYTHON_TAG)) return OPEN;
  if (start === text.length) return isFinal ? undefined : OPEN;
  if (text[start] !== '{') return undefined;
  const close = matchingClose(text, start);
  if (close === -1) return isFinal ? INVALID : OPEN;
  const call = callOf(parseLenientJson(text.slice(start, close + 1)), offered);
  if (call === undefined || text.slice(close + 1).trim() !== '') return INVALID;
  return isFinal ? { kind: 'calls', calls: [call] } : OPEN;
}

/**
 * The index of the bracket that closes the one at `open` (`{` or `[`), skipping brackets inside double-
 * quoted strings; -1 when the text ends first.
 */
function matchingClose(text: string, open: number): number {
  let depth = 0;
  let inString = false;
  for (let at = open; at < text.length; at += 1) {
    const char = text[at];
    if (inString) {
      if (char === '\\') at += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
    } else if (char === '{' || char === '[') {
      depth += 1;
    } else if (char === '}' || char === ']') {
      depth -= 1;
      if (depth === 0) return at;
    }
  }
  return -1;
}

/** The call a parsed value describes, or `undefined` when it names no offered tool or has no object input. */
function callOf(value: unknown, offered: ReadonlySet<string>): TextToolCall | undefined {
  if (!isObject(value)) return undefined;
  const name = value['name'];
  if (typeof name !== 'string' || !offered.has(name)) return undefined;
  let input: unknown = value['arguments'] ?? value['parameters'] ?? {};
  if (typeof input === 'string') input = input.trim() === '' ? {} : parseLenientJson(input);
  return isObject(input) ? { name, input } : undefined;
}

/**
 * The function names a translated request offers (Chat Completions `tools[].function.name`, Responses
 * `tools[].name`), or `undefined` when it offers none: without tools, no text is read as a call.
 */
export function offeredToolNames(tools: unknown): ReadonlySet<string> | undefined {
  if (!Array.isArray(tools)) return undefined;
  const names = new Set<string>();
  for (const tool of tools) {
    if (!isObject(tool) || tool['type'] !== 'function') continue;
    const name = isObject(tool['function']) ? tool['function']['name'] : tool['name'];
    if (typeof name === 'string') names.add(name);
  }
  return names.size === 0 ? undefined : names;
}
