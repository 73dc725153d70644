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
  const reading: Reading = { offered, isFinal: true };
  const bare = readBareCall(text, reading);
  if (bare !== undefined && bare.kind === 'calls') return { text: '', calls: bare.calls };
  for (let at = nextMarker(text, 0); at !== -1; at = nextMarker(text, at + 1)) {
    const run = readRun(text, at, reading);
    if (run.kind === 'calls') return { text: text.slice(0, at).trimEnd(), calls: run.calls };
  }
  return { text, calls: [] };
}

/**
 * Reads a streamed text piece by piece; see the module comment. Only the text not yet let out is kept
 * as one string (what went out is kept as pieces, joined once at the end), and while a call's JSON is
 * still open only the new pieces are scanned for its closing bracket: each piece costs its own length,
 * however long the answer or the call.
 */
export class TextToolCallScanner {
  readonly #offered: ReadonlySet<string>;
  readonly #reading: Reading;
  /** The text let out, piece by piece, and its length. */
  readonly #released: string[] = [];
  #releasedLength = 0;
  /** The text held back: it may still become a call. */
  #held = '';
  /** While the held call's JSON is open: where its bracket is (in `#held`), and the pieces since. */
  #open: { bracket: number; pieces: string[]; length: number } | undefined;
  #flushed = false;

  constructor(offered: ReadonlySet<string>) {
    this.#offered = offered;
    this.#reading = { offered, isFinal: false, brackets: new Map() };
  }

  /** Adds a piece; returns the text that can go out now (`''` while all of it is held). */
  push(piece: string): string {
    const open = this.#open;
    if (open !== undefined) {
      // Nothing read so far changes until the open bracket closes: scan the new piece for it alone.
      const search = this.#reading.brackets!.get(open.bracket)!;
      const base = this.#held.length + open.length;
      open.pieces.push(piece);
      open.length += piece.length;
      if (continueSearch(search, piece, base) === -1) return '';
      this.#held += open.pieces.join('');
      this.#open = undefined;
    } else {
      this.#held += piece;
    }
    this.#reading.unclosed = undefined;
    const safe = this.#safeLength();
    if (safe === 0) {
      const bracket = this.#reading.unclosed;
      if (bracket !== undefined) this.#open = { bracket, pieces: [], length: 0 };
      return '';
    }
    const out = this.#held.slice(0, safe);
    this.#held = this.#held.slice(safe);
    this.#released.push(out);
    this.#releasedLength += out.length;
    // Bracket positions were in the held text as it was: the next look searches anew.
    this.#reading.brackets!.clear();
    return out;
  }

  /** Everything not yet let out, as text: something other than text followed, so no call can end it. */
  flush(): string {
    const rest = this.#held + (this.#open?.pieces.join('') ?? '');
    this.#held = '';
    this.#open = undefined;
    this.#flushed = true;
    return rest;
  }

  /** The end of the text: the rest of the text that stays text, and the calls. */
  end(): TextWithCalls {
    if (this.#flushed) return { text: this.flush(), calls: [] };
    const whole = this.#released.join('') + this.flush();
    const { text, calls } = readTextToolCalls(whole, this.#offered);
    // What went out is a prefix of `text` by construction (`#safeLength`); the rest follows it.
    return { text: text.slice(this.#releasedLength), calls };
  }

  /**
   * How much of the held text is text whatever comes next: up to the first place a call may still begin,
   * less the white space before it (trimmed if the call comes true). Places in the text that went out
   * were ruled out for good, so only the held text is searched.
   */
  #safeLength(): number {
    const text = this.#held;
    if (this.#releasedLength === 0) {
      if (skipSpace(text, 0) === text.length) return 0;
      const bare = readBareCall(text, this.#reading);
      if (bare !== undefined && bare.kind !== 'invalid') return 0;
    }
    let hold = text.length;
    for (let at = nextMarker(text, 0); ; at = nextMarker(text, at + 1)) {
      if (at === -1) {
        hold = partialMarkerStart(text, 0);
        break;
      }
      if (readRun(text, at, this.#reading).kind !== 'invalid') {
        hold = at;
        break;
      }
    }
    while (hold > 0 && SPACE.test(text[hold - 1]!)) hold -= 1;
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
 * How a text is being read: the offered tool names; whether the text is whole (`isFinal`: nothing open
 * stays possible); and, for a stream, where earlier looks left each bracket's search, so that a call
 * streamed in many pieces is scanned once, not once per piece.
 */
interface Reading {
  offered: ReadonlySet<string>;
  isFinal: boolean;
  brackets?: BracketSearches;
  /** Set by a look that stopped at a bracket the text does not close yet: where that bracket is. */
  unclosed?: number | undefined;
}

/** Per opening bracket's position: where its search for the closing one stopped, or what it found. */
type BracketSearches = Map<number, BracketSearch>;

/** How far the search for one bracket's close got: the next index to read, and the state there. */
interface BracketSearch {
  at: number;
  depth: number;
  inString: boolean;
  close?: number;
}

/** Reads the calls of a run that starts with a marker at `at`, up to the end of the text. */
function readRun(text: string, at: number, reading: Reading): RunReading {
  const calls: TextToolCall[] = [];
  let position = at;
  for (;;) {
    let section: SectionReading;
    if (text.startsWith(HERMES_OPEN, position)) {
      section = readHermesSection(text, position + HERMES_OPEN.length, reading);
    } else if (text.startsWith(MISTRAL_OPEN, position)) {
      section = readMistralSection(text, position + MISTRAL_OPEN.length, reading);
    } else if (!reading.isFinal && MARKERS.some((marker) => isCutShort(text, position, marker))) {
      return OPEN;
    } else {
      return INVALID;
    }
    if (section.kind !== 'calls') return section;
    calls.push(...section.calls);
    position = skipSpace(text, section.end);
    if (position === text.length) return reading.isFinal ? { kind: 'calls', calls } : OPEN;
  }
}

type SectionReading =
  { kind: 'calls'; calls: TextToolCall[]; end: number } | { kind: 'open' } | { kind: 'invalid' };

/** The JSON value that opens with `opener` at `at` (after white space), parsed leniently, and its end. */
function readJsonAt(
  text: string,
  at: number,
  opener: '{' | '[',
  reading: Reading,
): { kind: 'value'; value: unknown; end: number } | typeof OPEN | typeof INVALID {
  const start = skipSpace(text, at);
  if (start === text.length) return reading.isFinal ? INVALID : OPEN;
  if (text[start] !== opener) return INVALID;
  const close = matchingClose(text, start, reading);
  if (close === -1) return reading.isFinal ? INVALID : OPEN;
  return { kind: 'value', value: parseLenientJson(text.slice(start, close + 1)), end: close + 1 };
}

/** `{…}` after `<tool_call>`, then white space and `</tool_call>` (which the last call may lack). */
function readHermesSection(text: string, at: number, reading: Reading): SectionReading {
  const json = readJsonAt(text, at, '{', reading);
  if (json.kind !== 'value') return json;
  const call = callOf(json.value, reading.offered);
  if (call === undefined) return INVALID;
  let end = skipSpace(text, json.end);
  if (text.startsWith(HERMES_CLOSE, end)) end += HERMES_CLOSE.length;
  else if (!reading.isFinal && isCutShort(text, end, HERMES_CLOSE)) return OPEN;
  else end = json.end;
  return { kind: 'calls', calls: [call], end };
}

/** `[{…}, …]` after `[TOOL_CALLS]`, or `name[ARGS]{…}`. */
function readMistralSection(text: string, at: number, reading: Reading): SectionReading {
  const start = skipSpace(text, at);
  if (start === text.length) return reading.isFinal ? INVALID : OPEN;
  if (text[start] === '[') {
    const json = readJsonAt(text, start, '[', reading);
    if (json.kind !== 'value') return json;
    if (!Array.isArray(json.value) || json.value.length === 0) return INVALID;
    const calls = json.value.map((item) => callOf(item, reading.offered));
    if (calls.some((call) => call === undefined)) return INVALID;
    return { kind: 'calls', calls: calls as TextToolCall[], end: json.end };
  }
  MISTRAL_NAME.lastIndex = start;
  const name = MISTRAL_NAME.exec(text)?.[0];
  if (name === undefined) return INVALID;
  const position = start + name.length;
  if (position === text.length) return reading.isFinal ? INVALID : OPEN;
  if (!text.startsWith(MISTRAL_ARGS, position)) {
    return !reading.isFinal && isCutShort(text, position, MISTRAL_ARGS) ? OPEN : INVALID;
  }
  const json = readJsonAt(text, position + MISTRAL_ARGS.length, '{', reading);
  if (json.kind !== 'value') return json;
  const call = callOf({ name, arguments: json.value }, reading.offered);
  return call === undefined ? INVALID : { kind: 'calls', calls: [call], end: json.end };
}

/**
 * A bare `{"name", "arguments"|"parameters"}` object as the whole text (after white space and an optional
 * `<|python_tag|>`); `undefined` when the text does not start like one.
 */
function readBareCall(text: string, reading: Reading): RunReading | undefined {
  let start = skipSpace(text, 0);
  if (text.startsWith(PYTHON_TAG, start)) start = skipSpace(text, start + PYTHON_TAG.length);
  else if (!reading.isFinal && isCutShort(text, start, PYTHON_TAG)) return OPEN;
  if (start === text.length) return reading.isFinal ? undefined : OPEN;
  if (text[start] !== '{') return undefined;
  const json = readJsonAt(text, start, '{', reading);
  if (json.kind !== 'value') return json;
  const call = callOf(json.value, reading.offered);
  if (call === undefined || skipSpace(text, json.end) !== text.length) return INVALID;
  return reading.isFinal ? { kind: 'calls', calls: [call] } : OPEN;
}

/**
 * The index of the bracket that closes the one at `open` (`{` or `[`), skipping brackets inside double-
 * quoted strings; -1 when the text ends first. With `reading.brackets`, a search resumes where the last
 * one for this bracket stopped (the text only grows), a found close is kept, and an open bracket is
 * noted as `reading.unclosed`.
 */
function matchingClose(text: string, open: number, reading: Reading): number {
  const searches = reading.brackets;
  let search = searches?.get(open);
  if (search === undefined) {
    search = { at: open, depth: 0, inString: false };
    searches?.set(open, search);
  }
  if (search.close !== undefined) return search.close;
  const close = continueSearch(search, text.slice(search.at), search.at);
  if (close === -1) reading.unclosed = open;
  return close;
}

/**
 * Carries a bracket search on through `piece`, which starts at index `base` of the text; the index of
 * the closing bracket, or -1 when the piece ends first.
 */
function continueSearch(search: BracketSearch, piece: string, base: number): number {
  let { depth, inString } = search;
  let at = search.at - base;
  for (; at < piece.length; at += 1) {
    const char = piece[at];
    if (inString) {
      if (char === '\\') at += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
    } else if (char === '{' || char === '[') {
      depth += 1;
    } else if (char === '}' || char === ']') {
      depth -= 1;
      if (depth === 0) {
        search.close = base + at;
        return search.close;
      }
    }
  }
  search.at = base + at;
  search.depth = depth;
  search.inString = inString;
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
