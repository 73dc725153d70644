/**
 * The fault modes, as data: for each, what the upstream does (a script step per attempt, for each
 * provider and for JSON or SSE requests), which providers it applies to, and the outcome expected at
 * each entry point. The same table drives the library runs, the proxy runs and `docs/reliability.md`.
 *
 * Every run uses `maxRetries: 1` with an injected, instant `sleep`, so the table also says which
 * failures are retried (two upstream attempts) and which are not. The proxy outcome is derived from
 * the library outcome: a message is a 200; an error before the first event is that HTTP status; an
 * error after it is a 200 stream ending in `event: error`.
 *
 * @module
 */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { expect } from 'vitest';
import type { DeadlineName, Message, MessagesErrorType, TransportErrorCode } from '../../src/index.js';
import { step, type Step } from '../helpers/scripted-server.js';
import {
  ANSWER_TEXT,
  anthropicEnd,
  anthropicError,
  anthropicFrames,
  anthropicMessage,
  anthropicStart,
  anthropicTextBlock,
  anthropicTextEvents,
  anthropicToolBlock,
  anthropicToolUse,
  goodBody,
  goodFrames,
  openAiChunk,
  openAiCompletion,
  openAiError,
  openAiFrames,
  openAiTextChunks,
  openAiToolCall,
  openAiToolCallDelta,
  openAiUsageChunk,
  type UpstreamKind,
} from './fault-bodies.js';

/** The two ways a caller reaches the model. */
export type EntryPoint = 'send' | 'stream';

/**
 * Deadlines per run; each mode picks one. The upstream runs in the same process as the client, so a
 * pause of the process (garbage collection, another test file on a busy machine) delays the answer and
 * the timers alike, and after the pause expired timers run before pending reads: short first-byte and
 * idle deadlines are therefore kept to the modes that are meant to hit them.
 */
export const DEADLINE_PROFILES = {
  /** Modes that should not meet any deadline. */
  standard: { connectTimeoutMs: 2_000, firstByteTimeoutMs: 2_000, idleTimeoutMs: 2_000, timeoutMs: 3_000 },
  /** Stalls: the first-byte and idle deadlines pass quickly. */
  stall: { connectTimeoutMs: 2_000, firstByteTimeoutMs: 100, idleTimeoutMs: 100, timeoutMs: 1_500 },
  /** An upstream that keeps the idle deadline at bay: only the total deadline can end it. */
  shortTotal: { connectTimeoutMs: 2_000, firstByteTimeoutMs: 2_000, idleTimeoutMs: 2_000, timeoutMs: 300 },
  /** Retry hints of a second or two (the sleep itself is instant). */
  patient: { connectTimeoutMs: 2_000, firstByteTimeoutMs: 2_000, idleTimeoutMs: 2_000, timeoutMs: 5_000 },
  /** Retry hints of more than a minute that still fit in the total deadline (the sleep is instant). */
  long: { connectTimeoutMs: 2_000, firstByteTimeoutMs: 2_000, idleTimeoutMs: 2_000, timeoutMs: 120_000 },
} as const;

export type DeadlineProfile = keyof typeof DEADLINE_PROFILES;

/** Largest response accepted in the fault runs (`maxResponseBytes`). */
export const RESPONSE_LIMIT_BYTES = 64 * 1024;

/** What a script step is built from. */
export interface ScriptContext {
  provider: UpstreamKind;
  /** Whether the request asked for a stream. */
  stream: boolean;
  /** 0 for the first upstream request of the case, 1 for the retry. */
  attempt: number;
}

/** A delivered message (for a stream: a complete event sequence that folds into one). */
export interface MessageOutcome {
  kind: 'message';
  /** Upstream requests made. @default 1 */
  attempts?: number;
}

/** A typed error. */
export interface ErrorOutcome {
  kind: 'error';
  code: TransportErrorCode;
  status: number;
  type: MessagesErrorType;
  /** Stream only: whether events were delivered before the error. @default false */
  afterEvents?: boolean;
  /** `MODEL_ETIMEOUT` only: which deadline passed. */
  deadline?: DeadlineName;
  /** Upstream requests made; `undefined` when they cannot be counted (nothing listens). @default 1 */
  attempts?: number | undefined;
}

export type Outcome = MessageOutcome | ErrorOutcome;

/** An outcome for both providers, or one per provider. */
export type OutcomeSpec = Outcome | { anthropic: Outcome; tpx: Outcome };

export interface FaultMode {
  /** Short, stable name (kebab-case). */
  name: string;
  /** What the upstream does, in a sentence (for the report). */
  upstream: string;
  /** Providers the mode applies to. @default both */
  providers?: readonly UpstreamKind[];
  /** @default 'standard' */
  profile?: DeadlineProfile;
  /** Nothing listens at the upstream address. */
  refused?: boolean;
  /** The upstream's answer to one request. */
  script?: (context: ScriptContext) => Step;
  expected: { send: OutcomeSpec; stream: OutcomeSpec };
  /** Checks a delivered message. @default its text is exactly `ANSWER_TEXT` */
  checkMessage?: (message: Message, provider: UpstreamKind) => void;
  /** Checks the delays the transport slept before retrying. */
  checkSleeps?: (sleepsMs: readonly number[]) => void;
  /** Headers the proxy must pass back with its error answer. */
  passedBack?: Readonly<Record<string, string>>;
}

/** The outcome a mode expects for one provider and entry point. */
export function expectedOutcome(mode: FaultMode, provider: UpstreamKind, entry: EntryPoint): Outcome {
  const spec = mode.expected[entry];
  return 'kind' in spec ? spec : spec[provider];
}

export function appliesTo(mode: FaultMode, provider: UpstreamKind): boolean {
  return mode.providers === undefined || mode.providers.includes(provider);
}

// ---------------------------------------------------------------------------------------------------
// Outcome shorthands

const message = (attempts = 1): MessageOutcome => ({ kind: 'message', attempts });

function failure(
  code: TransportErrorCode,
  status: number,
  type: MessagesErrorType,
  options: { afterEvents?: boolean; deadline?: DeadlineName; attempts?: number | undefined } = {},
): ErrorOutcome {
  return { kind: 'error', code, status, type, afterEvents: false, attempts: 1, ...options };
}

/** A socket failure: retried when nothing was delivered yet (`attempts: null` when nothing listens to count them). */
const transportFailure = (attempts: number | null = 2, afterEvents = false) =>
  failure('MODEL_ETRANSPORT', 502, 'api_error', {
    attempts: afterEvents ? 1 : (attempts ?? undefined),
    afterEvents,
  });
const timeout = (deadline: DeadlineName, afterEvents = false) =>
  failure('MODEL_ETIMEOUT', 504, 'timeout_error', {
    deadline,
    afterEvents,
    // Only a deadline of one attempt is worth a retry, and never once the caller has events.
    attempts: afterEvents || deadline === 'total' ? 1 : 2,
  });
const protocol = (afterEvents = false, attempts = 1) =>
  failure('MODEL_EPROTO', 502, 'api_error', { afterEvents, attempts });
// The upstream's answer is at fault, not the caller's request: a 502, never a 413 that blames the caller.
const tooBig = (afterEvents = false) => failure('MODEL_ETOOBIG', 502, 'api_error', { afterEvents });
const http = (status: number, type: MessagesErrorType, attempts = 1, afterEvents = false) =>
  failure('MODEL_EHTTP', status, type, { attempts, afterEvents });

// ---------------------------------------------------------------------------------------------------
// Script shorthands

const CLOSE = { connection: 'close' };
const JSON_HEADERS = { 'content-type': 'application/json', ...CLOSE };
const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  ...CLOSE,
};
const HTML_HEADERS = { 'content-type': 'text/html; charset=utf-8', ...CLOSE };

function headersFor(context: ScriptContext): Record<string, string> {
  return context.stream ? SSE_HEADERS : JSON_HEADERS;
}

/** A good answer of the requested kind. */
function good(context: ScriptContext): Step {
  return context.stream
    ? step.sse(goodFrames(context.provider), { headers: CLOSE })
    : step.json(goodBody(context.provider), { headers: CLOSE });
}

/** The good answer as text: the JSON body, or the SSE frames joined. */
function goodText(context: ScriptContext): string {
  return context.stream ? goodFrames(context.provider).join('') : JSON.stringify(goodBody(context.provider));
}

/** Writes `frames` (with `then` after the last) with the requested kind's headers. */
function frames(
  context: ScriptContext,
  list: readonly string[],
  then: 'end' | 'hang' | 'reset' = 'end',
): Step {
  return step.sse(list, { headers: headersFor(context), then });
}

/** The first `count` frames of the good stream, and `cut` characters of the next one. */
function goodPrefix(context: ScriptContext, count: number, cut = 0): string[] {
  const all = goodFrames(context.provider);
  const prefix = all.slice(0, count);
  if (cut > 0) prefix.push(all[count]!.slice(0, cut));
  return prefix;
}

/** Half of the good JSON body. */
function halfBody(context: ScriptContext): string {
  const text = JSON.stringify(goodBody(context.provider));
  return text.slice(0, Math.floor(text.length / 2));
}

/** Writes raw bytes in pieces, `gapMs` apart, then ends. */
function bytes(status: number, headers: Record<string, string>, pieces: readonly Buffer[], gapMs = 0): Step {
  return step.handle(async ({ response }) => {
    response.writeHead(status, headers);
    response.flushHeaders();
    for (const piece of pieces) {
      if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
      if (response.destroyed) return;
      response.write(piece);
    }
    response.end();
  });
}

/** Writes `text` one byte per turn of the event loop (so the client reads it byte by byte), then ends. */
function trickleAll(headers: Record<string, string>, text: string): Step {
  return step.handle(async ({ response }) => {
    response.writeHead(200, headers);
    response.flushHeaders();
    const all = Buffer.from(text);
    for (let offset = 0; offset < all.length; offset++) {
      await new Promise((resolve) => setImmediate(resolve));
      if (response.destroyed) return;
      response.write(all.subarray(offset, offset + 1));
    }
    response.end();
  });
}

/** An error answer in each provider's own error body. */
function errorAnswer(
  status: number,
  anthropicType: string,
  openAi: unknown,
  headers: Record<string, string> = {},
): (context: ScriptContext) => Step {
  return (context) =>
    step.json(
      context.provider === 'anthropic' ? anthropicError(anthropicType, `scripted ${status}`) : openAi,
      { status, headers: { ...CLOSE, ...headers } },
    );
}

/** An answer with `text` in it: a message, or a stream of one text block. */
function textAnswer(context: ScriptContext, text: string): Step {
  return context.stream
    ? step.sse(goodFrames(context.provider, [text]), { headers: CLOSE })
    : step.json(goodBody(context.provider, text), { headers: CLOSE });
}

function textOf(message: Message): string {
  return message.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('');
}

function toolUses(message: Message) {
  return message.content.flatMap((block) => (block.type === 'tool_use' ? [block] : []));
}

const SAFE_TOOL_ID = /^[A-Za-z0-9_-]{1,}$/;

function expectDistinctSafeToolIds(message: Message, count: number): void {
  const ids = toolUses(message).map((block) => block.id);
  expect(ids).toHaveLength(count);
  expect(new Set(ids).size).toBe(count);
  for (const id of ids) expect(id).toMatch(SAFE_TOOL_ID);
  expect(message.stop_reason).toBe('tool_use');
}

// ---------------------------------------------------------------------------------------------------
// Upstream bodies used by several modes

const HTML_502 =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
const HTML_200 =
  '<!doctype html><html><head><title>Welcome to the dashboard</title></head><body><div id="app"></div><script src="/main.js"></script></body></html>';
const UTF8_TEXT = 'Grüße ✓ 🎉';
const LARGE_TEXT = 'a'.repeat(40 * 1024);
const ENORMOUS_TEXT = 'b'.repeat(100 * 1024);

/** Anthropic-shaped events with ids/names/inputs chosen per mode, wrapped in start and end. */
function anthropicToolStream(blocks: readonly { type: string }[][], stopReason = 'tool_use'): string[] {
  return anthropicFrames([anthropicStart(), ...blocks.flat(), ...anthropicEnd(stopReason)]);
}

/** A tool-call answer for each provider and kind, from tool calls given as (id, name, arguments). */
function toolAnswer(
  context: ScriptContext,
  calls: readonly { id: string | undefined; name: string | undefined; args?: string }[],
): Step {
  const args = (call: { args?: string }) => call.args ?? '{"city":"Paris"}';
  if (context.provider === 'anthropic') {
    if (!context.stream) {
      const blocks = calls.map((call) => {
        let input: unknown;
        try {
          input = JSON.parse(args(call));
        } catch {
          input = args(call);
        }
        return anthropicToolUse(call.id, call.name, input);
      });
      return step.json(anthropicMessage(blocks, 'tool_use'), { headers: CLOSE });
    }
    const blocks = calls.map((call, index) => anthropicToolBlock(index, call.id, call.name, [args(call)]));
    return step.sse(anthropicToolStream(blocks), { headers: CLOSE });
  }
  if (!context.stream) {
    const toolCalls = calls.map((call) => openAiToolCall(call.id, call.name, args(call)));
    return step.json(
      openAiCompletion({ role: 'assistant', content: null, tool_calls: toolCalls }, 'tool_calls'),
      {
        headers: CLOSE,
      },
    );
  }
  const chunks = calls.map((call, index) =>
    openAiChunk({
      tool_calls: [
        openAiToolCallDelta({
          index,
          ...(call.id !== undefined ? { id: call.id } : {}),
          ...(call.name !== undefined ? { name: call.name } : {}),
          arguments: args(call),
        }),
      ],
    }),
  );
  return step.sse(
    openAiFrames([
      openAiChunk({ role: 'assistant', content: null }),
      ...chunks,
      openAiChunk({}, 'tool_calls'),
      openAiUsageChunk(),
    ]),
    { headers: CLOSE },
  );
}

// ---------------------------------------------------------------------------------------------------
// The table

export const FAULT_MODES: readonly FaultMode[] = [
  {
    name: 'well-behaved',
    upstream: 'answers correctly (the baseline every other mode departs from)',
    script: good,
    expected: { send: message(), stream: message() },
  },

  // --- connections ------------------------------------------------------------------------------
  {
    name: 'connection-refused',
    upstream: 'nothing listens: the connection is refused',
    refused: true,
    expected: { send: transportFailure(null), stream: transportFailure(null) },
  },
  {
    name: 'reset-before-headers',
    upstream: 'reads the request, then resets the connection before any response byte',
    script: () => step.reset('before-headers'),
    expected: { send: transportFailure(), stream: transportFailure() },
  },
  {
    name: 'reset-after-headers',
    upstream: 'sends 200 and the headers, then resets the connection',
    script: (context) => step.reset('after-headers', { headers: headersFor(context) }),
    expected: { send: transportFailure(), stream: transportFailure() },
  },
  {
    name: 'reset-mid-body',
    upstream: 'sends part of the answer (half the JSON, or the first whole events), then resets',
    script: (context) =>
      context.stream
        ? frames(context, goodPrefix(context, 3), 'reset')
        : step.reset('mid-body', { headers: JSON_HEADERS, body: halfBody(context) }),
    expected: { send: transportFailure(), stream: transportFailure(2, true) },
  },
  {
    name: 'reset-mid-sse-event',
    upstream: 'sends one whole event and half of the next (half the JSON for send), then resets',
    script: (context) =>
      context.stream
        ? frames(context, goodPrefix(context, 1, 20), 'reset')
        : step.reset('mid-body', { headers: JSON_HEADERS, body: halfBody(context) }),
    expected: { send: transportFailure(), stream: transportFailure(2, true) },
  },

  // --- stalls and trickles -----------------------------------------------------------------------
  {
    name: 'stall-before-headers',
    profile: 'stall',
    upstream: 'reads the request and never answers',
    script: () => step.noHeaders(),
    expected: { send: timeout('first-byte'), stream: timeout('first-byte') },
  },
  {
    name: 'stall-after-headers',
    profile: 'stall',
    upstream: 'sends 200 and the headers, then nothing, forever',
    script: (context) => step.hangAfterHeaders(200, headersFor(context)),
    expected: { send: timeout('idle'), stream: timeout('idle') },
  },
  {
    name: 'stall-between-chunks',
    profile: 'stall',
    upstream: 'sends part of the answer, then goes silent with the connection open',
    script: (context) =>
      context.stream
        ? frames(context, goodPrefix(context, 2), 'hang')
        : frames(context, [halfBody(context)], 'hang'),
    expected: { send: timeout('idle'), stream: timeout('idle', true) },
  },
  {
    name: 'stall-after-final-event',
    profile: 'stall',
    upstream: 'sends the whole answer (through message_stop / [DONE]) but never ends the response',
    script: (context) => frames(context, [goodText(context)], 'hang'),
    // A JSON body of unknown length is not over until the response ends; a stream is over at its end marker.
    expected: { send: timeout('idle'), stream: message() },
  },
  {
    name: 'stall-before-end-marker',
    profile: 'stall',
    upstream:
      'stream: every event but message_stop / [DONE], then silence; send: the whole JSON, one byte short of its content-length, then silence',
    script: (context) => {
      if (!context.stream) {
        const body = JSON.stringify(goodBody(context.provider));
        return step.handle(({ response }) => {
          response.strictContentLength = false;
          response.writeHead(200, { ...JSON_HEADERS, 'content-length': String(Buffer.byteLength(body) + 1) });
          response.write(body);
        });
      }
      const list =
        context.provider === 'anthropic'
          ? anthropicFrames(anthropicTextEvents().slice(0, -1))
          : openAiFrames(openAiTextChunks(), false);
      return frames(context, list, 'hang');
    },
    expected: { send: timeout('idle'), stream: timeout('idle', true) },
  },
  {
    name: 'trickle-whole-answer',
    upstream: 'sends the whole answer one byte at a time, each in its own write',
    script: (context) => trickleAll(headersFor(context), goodText(context)),
    expected: { send: message(), stream: message() },
  },
  {
    name: 'trickle-forever',
    upstream:
      'sends one byte (a space, or a blank SSE line) every 20 ms, forever: the idle deadline never passes',
    profile: 'shortTotal',
    script: (context) =>
      step.trickle({ chunk: context.stream ? '\n' : ' ', intervalMs: 20, headers: headersFor(context) }),
    expected: { send: timeout('total'), stream: timeout('total') },
  },

  // --- what the body is -----------------------------------------------------------------------------
  {
    name: 'wrong-content-type',
    upstream: 'sends the right body as text/plain',
    script: (context) => step.text(200, goodText(context), { 'content-type': 'text/plain', ...CLOSE }),
    // JSON needs no content type to be read; an event stream without its type is not a stream.
    expected: { send: message(), stream: protocol() },
  },
  {
    name: 'json-answer-to-stream-request',
    upstream: 'ignores "stream": true and answers one JSON body',
    script: (context) => step.json(goodBody(context.provider), { headers: CLOSE }),
    // Some OpenAI-compatible servers do this; Anthropic never does.
    expected: { send: message(), stream: { anthropic: protocol(), tpx: message() } },
  },
  {
    name: 'html-error-page',
    upstream: 'answers 502 with the HTML error page of a load balancer',
    script: () => step.text(502, HTML_502, HTML_HEADERS),
    expected: { send: http(502, 'api_error', 2), stream: http(502, 'api_error', 2) },
  },
  {
    name: 'html-page-200',
    upstream: 'answers 200 with a web page (a wrong base URL)',
    script: () => step.text(200, HTML_200, HTML_HEADERS),
    expected: { send: protocol(), stream: protocol() },
  },
  {
    name: 'invalid-json',
    upstream: 'sends JSON with a syntax error (the body, or the first event)',
    script: (context) => {
      if (!context.stream) return step.text(200, '{"id": "msg_1", "type": message, }', JSON_HEADERS);
      return frames(
        context,
        context.provider === 'anthropic'
          ? ['event: message_start\ndata: {"type": "message_start", "message": }\n\n']
          : ['data: {"choices": [ }\n\n'],
      );
    },
    expected: { send: protocol(), stream: protocol() },
  },
  {
    name: 'wrong-shape-json',
    upstream:
      "answers valid JSON of the other protocol's shape (a chat completion to Anthropic, a message to tpx)",
    script: (context) => {
      const other: UpstreamKind = context.provider === 'anthropic' ? 'tpx' : 'anthropic';
      return context.stream
        ? step.sse(goodFrames(other), { headers: CLOSE })
        : step.json(goodBody(other), { headers: CLOSE });
    },
    // Anthropic's events are valid chunks with nothing in them, so the translated stream starts, then ends
    // without a finish; the native stream refuses the first chunk.
    expected: { send: protocol(), stream: { anthropic: protocol(), tpx: protocol(true) } },
  },
  {
    name: 'empty-200',
    upstream: 'answers 200 with an empty body',
    script: (context) => (context.stream ? frames(context, []) : step.text(200, '', JSON_HEADERS)),
    expected: { send: protocol(), stream: protocol() },
  },
  {
    name: 'truncated-lying-content-length',
    upstream: 'declares the full content-length, sends 60 % of the body, then closes the connection',
    script: (context) => {
      const text = goodText(context);
      const cut = context.stream
        ? goodPrefix(context, 2).join('').length + 10
        : Math.floor(Buffer.byteLength(text) * 0.6);
      return step.lyingLength(Buffer.byteLength(text), text.slice(0, cut), { headers: headersFor(context) });
    },
    expected: { send: protocol(false, 2), stream: protocol(true) },
  },

  // --- encodings and framing ---------------------------------------------------------------------
  {
    name: 'invalid-utf8',
    upstream: 'puts bytes that are not UTF-8 (FF FE) inside the answer text',
    script: (context) => {
      const [before, after] = goodText(context).split(ANSWER_TEXT.slice(2)) as [string, string];
      const pieces = [
        Buffer.from(`${before} `),
        Buffer.from([0xff, 0xfe]),
        Buffer.from(`${ANSWER_TEXT.slice(3)}${after}`),
      ];
      return bytes(200, headersFor(context), pieces);
    },
    // Decoded with replacement characters, as browsers decode event streams.
    expected: { send: message(), stream: message() },
    checkMessage: (delivered) => expect(textOf(delivered)).toBe('Hi \uFFFD\uFFFDthere'),
  },
  {
    name: 'utf8-split-across-chunks',
    upstream: 'splits multi-byte characters between two writes, 5 ms apart',
    script: (context) => {
      const all = Buffer.from(
        context.stream
          ? goodFrames(context.provider, [UTF8_TEXT]).join('')
          : JSON.stringify(goodBody(context.provider, UTF8_TEXT)),
      );
      // Inside the four bytes of the emoji.
      const cut = all.indexOf(Buffer.from('🎉')) + 2;
      return bytes(200, headersFor(context), [all.subarray(0, cut), all.subarray(cut)], 5);
    },
    expected: { send: message(), stream: message() },
    checkMessage: (delivered) => expect(textOf(delivered)).toBe(UTF8_TEXT),
  },
  {
    name: 'leading-bom',
    upstream: 'starts the body with a UTF-8 byte order mark',
    script: (context) =>
      bytes(200, headersFor(context), [Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(goodText(context))]),
    // RFC 8259 §8.1 lets a JSON reader ignore it; the event-stream format strips it.
    expected: { send: message(), stream: message() },
  },
  {
    name: 'crlf-line-endings',
    upstream: 'ends every line with CRLF',
    script: (context) =>
      context.stream
        ? frames(
            context,
            goodFrames(context.provider).map((frame) => frame.replace(/\n/g, '\r\n')),
          )
        : step.text(
            200,
            JSON.stringify(goodBody(context.provider), null, 2).replace(/\n/g, '\r\n'),
            JSON_HEADERS,
          ),
    expected: { send: message(), stream: message() },
  },
  {
    name: 'sse-without-blank-lines',
    upstream: 'sends the events with no blank line between them, so they run together into one',
    script: (context) => {
      const joined = goodFrames(context.provider)
        .map((frame) => frame.replace(/\n\n$/, '\n'))
        .join('');
      return step.text(200, joined, SSE_HEADERS);
    },
    expected: { send: protocol(), stream: protocol() },
  },
  {
    name: 'missing-final-blank-line',
    upstream: 'leaves the blank line off the last event (the JSON body has no final newline either)',
    script: (context) => {
      if (!context.stream) return step.json(goodBody(context.provider), { headers: CLOSE });
      const list = goodFrames(context.provider);
      list[list.length - 1] = list[list.length - 1]!.replace(/\n\n$/, '');
      return frames(context, list);
    },
    expected: { send: message(), stream: message() },
  },
  {
    name: 'comments-and-pings',
    upstream: 'interleaves SSE comments (and, for Anthropic, ping events) with the events',
    script: (context) => {
      if (!context.stream) return step.text(200, `\n  ${goodText(context)}\n\n`, JSON_HEADERS);
      const list = goodFrames(context.provider);
      const ping = context.provider === 'anthropic' ? 'event: ping\ndata: {"type": "ping"}\n\n' : '';
      const mixed = [': OPENROUTER PROCESSING\n\n', list[0]!, ping];
      for (const frame of list.slice(1)) mixed.push(': keep-alive\n\n', frame, ping);
      return frames(
        context,
        mixed.filter((frame) => frame !== ''),
      );
    },
    expected: { send: message(), stream: message() },
  },
  {
    name: 'unknown-events-and-fields',
    upstream: 'adds fields nobody asked for and (for Anthropic) event types from the future',
    script: (context) => {
      if (context.provider === 'anthropic') {
        if (!context.stream) {
          return step.json(
            { ...anthropicMessage(), container: null, future_field: { nested: [1, 2] } },
            { headers: CLOSE },
          );
        }
        const list = anthropicFrames(anthropicTextEvents());
        list.splice(1, 0, 'event: future_event\ndata: {"type": "future_event", "detail": 1}\n\n');
        return frames(context, list);
      }
      const extra = {
        system_fingerprint: null,
        obfuscation: 'xK3',
        x_groq: { id: 'req_1' },
        provider: 'Somewhere',
      };
      if (!context.stream) return step.json({ ...openAiCompletion(), ...extra }, { headers: CLOSE });
      return frames(context, openAiFrames(openAiTextChunks().map((chunk) => ({ ...chunk, ...extra }))));
    },
    expected: { send: message(), stream: message() },
  },
  {
    name: 'future-delta-and-block-types',
    upstream: 'adds a content block of a type from the future, extended by a delta type from the future',
    providers: ['anthropic'],
    script: (context) => {
      if (!context.stream) {
        const body = anthropicMessage();
        return step.json(
          { ...body, content: [...body.content, { type: 'future_block', detail: { a: 1 } }] },
          { headers: CLOSE },
        );
      }
      const events = anthropicTextEvents();
      const end = events.length - 2;
      const future = [
        { type: 'content_block_start', index: 1, content_block: { type: 'future_block', detail: {} } },
        { type: 'content_block_delta', index: 1, delta: { type: 'future_delta', detail: 'more' } },
        { type: 'content_block_stop', index: 1 },
      ];
      return frames(context, anthropicFrames([...events.slice(0, end), ...future, ...events.slice(end)]));
    },
    // Forwarded, not fatal: Anthropic adds block and delta types often, and clients skip what they do not know.
    expected: { send: message(), stream: message() },
    checkMessage: (message) => {
      expect(message.content.map((block) => block.type)).toEqual(['text', 'future_block']);
      expect((message.content[0] as { text: string }).text).toBe(ANSWER_TEXT);
    },
  },
  {
    name: 'named-ping-events',
    upstream: 'interleaves `event: ping` keep-alives (and, for tpx, `{"type":"ping"}` data) with the events',
    script: (context) => {
      if (!context.stream) return good(context);
      const list = [...goodFrames(context.provider)];
      const pings =
        context.provider === 'anthropic'
          ? ['event: ping\ndata: {"type": "ping"}\n\n']
          : ['event: ping\ndata: {"type": "ping"}\n\n', 'data: {"type": "ping"}\n\n'];
      list.splice(1, 0, ...pings);
      list.splice(3, 0, ...pings);
      return frames(context, list);
    },
    expected: { send: message(), stream: message() },
  },
  {
    name: 'interim-continue',
    upstream:
      'sends interim `100 Continue` heads (two, one with a field, split across writes) and a `103 Early Hints` before the answer',
    script: (context) =>
      step.handle(async ({ response, socket }) => {
        // Written on the socket directly: node's server would send only one 100, and whole.
        socket.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Con');
        await new Promise((resolve) => setTimeout(resolve, 5));
        socket.write('tinue\r\nx-interim: yes\r\n\r\n');
        response.writeEarlyHints({ link: '</style.css>; rel=preload' });
        const headers = headersFor(context);
        response.writeHead(200, headers);
        response.end(goodText(context));
      }),
    expected: { send: message(), stream: message() },
  },
  {
    name: 'mixed-case-content-type',
    upstream: 'names its media type in mixed case with parameters (`Text/Event-Stream; Charset=UTF-8`)',
    script: (context) =>
      bytes(
        200,
        {
          'content-type': context.stream
            ? 'Text/Event-Stream; Charset=UTF-8'
            : 'Application/JSON; Charset=UTF-8',
          ...CLOSE,
        },
        [Buffer.from(goodText(context))],
      ),
    expected: { send: message(), stream: message() },
  },
  {
    name: 'gzip-answer',
    upstream: 'compresses the answer with gzip although asked for identity',
    script: (context) =>
      bytes(200, { ...headersFor(context), 'content-encoding': 'gzip' }, [gzipSync(goodText(context))]),
    expected: { send: message(), stream: message() },
  },
  {
    name: 'brotli-answer',
    upstream: 'compresses the answer with br, in two writes',
    script: (context) => {
      const compressed = brotliCompressSync(goodText(context));
      const half = Math.floor(compressed.length / 2);
      return bytes(
        200,
        { ...headersFor(context), 'content-encoding': 'br' },
        [compressed.subarray(0, half), compressed.subarray(half)],
        5,
      );
    },
    expected: { send: message(), stream: message() },
  },
  {
    name: 'deflate-answer',
    upstream: 'compresses the answer with deflate',
    script: (context) =>
      bytes(200, { ...headersFor(context), 'content-encoding': 'deflate' }, [deflateSync(goodText(context))]),
    expected: { send: message(), stream: message() },
  },
  {
    name: 'corrupt-gzip-answer',
    upstream: 'declares content-encoding gzip and sends bytes that are not gzip',
    script: (context) =>
      bytes(200, { ...headersFor(context), 'content-encoding': 'gzip' }, [Buffer.from(goodText(context))]),
    expected: { send: protocol(), stream: protocol() },
  },
  {
    name: 'unknown-content-encoding',
    upstream: 'answers with content-encoding: compress, a coding nobody decodes',
    script: (context) =>
      bytes(200, { ...headersFor(context), 'content-encoding': 'compress' }, [
        Buffer.from(goodText(context)),
      ]),
    expected: { send: protocol(), stream: protocol() },
  },
  {
    name: 'data-after-end',
    upstream: 'keeps sending after the end: events after message_stop / [DONE], bytes after the JSON value',
    script: (context) => {
      if (!context.stream) return step.text(200, `${goodText(context)} {"more": true}`, JSON_HEADERS);
      const junk =
        context.provider === 'anthropic'
          ? anthropicFrames([{ type: 'message_start' }])
          : ['data: {"choices": "not even a chunk"}\n\n', 'data: {broken\n\n'];
      return frames(context, [...goodFrames(context.provider), ...junk]);
    },
    // A JSON body with trailing data is not JSON; a stream is over at its end marker.
    expected: { send: protocol(), stream: message() },
  },

  // --- sizes ---------------------------------------------------------------------------------------
  {
    name: 'large-event-within-limit',
    upstream: 'sends one 40 KiB text delta (the limit is 64 KiB)',
    script: (context) => textAnswer(context, LARGE_TEXT),
    expected: { send: message(), stream: message() },
    checkMessage: (delivered) => expect(textOf(delivered)).toBe(LARGE_TEXT),
  },
  {
    name: 'enormous-single-event',
    upstream: 'sends one 100 KiB text delta (or a 100 KiB JSON body), over the 64 KiB response limit',
    script: (context) => textAnswer(context, ENORMOUS_TEXT),
    // The event comes after message_start and content_block_start, which reach the caller first.
    expected: { send: tooBig(), stream: tooBig(true) },
  },
  {
    name: 'over-limit-in-small-pieces',
    upstream: 'sends 100 KiB in small valid pieces (text deltas, or a JSON body without content-length)',
    script: (context) => {
      if (!context.stream) return step.oversize(100 * 1024, { headers: JSON_HEADERS, chunk: '          ' });
      const piece = 'c'.repeat(200);
      const list =
        context.provider === 'anthropic'
          ? anthropicFrames([
              anthropicStart(),
              ...anthropicTextBlock(
                0,
                Array.from({ length: 400 }, () => piece),
              ),
              ...anthropicEnd(),
            ])
          : openAiFrames([
              openAiChunk({ role: 'assistant', content: '' }),
              ...Array.from({ length: 400 }, () => openAiChunk({ content: piece })),
              openAiChunk({}, 'stop'),
            ]);
      return frames(context, list);
    },
    expected: { send: tooBig(), stream: tooBig(true) },
  },
  {
    name: 'over-limit-declared',
    upstream: 'declares a 100 KiB content-length and sends that much (SSE: comment lines)',
    script: (context) =>
      step.oversize(100 * 1024, {
        declareLength: true,
        headers: headersFor(context),
        chunk: context.stream ? ': padding padding padding\n\n' : '          ',
      }),
    expected: { send: tooBig(), stream: tooBig() },
  },

  // --- error statuses ------------------------------------------------------------------------------
  {
    name: 'status-400',
    upstream: 'answers 400 with its own error body',
    script: errorAnswer(
      400,
      'invalid_request_error',
      openAiError('invalid_request_error', 'bad param', 'unsupported_parameter'),
    ),
    expected: { send: http(400, 'invalid_request_error'), stream: http(400, 'invalid_request_error') },
  },
  {
    name: 'status-401',
    upstream: 'answers 401: the credentials are refused',
    script: errorAnswer(
      401,
      'authentication_error',
      openAiError('invalid_request_error', 'Incorrect API key', 'invalid_api_key'),
    ),
    // DESIGN: MODEL_EAUTH is also "the provider refused the credentials".
    expected: {
      send: failure('MODEL_EAUTH', 401, 'authentication_error'),
      stream: failure('MODEL_EAUTH', 401, 'authentication_error'),
    },
  },
  {
    name: 'status-403',
    upstream: 'answers 403',
    script: errorAnswer(403, 'permission_error', openAiError('permission_error', 'region not supported')),
    expected: { send: http(403, 'permission_error'), stream: http(403, 'permission_error') },
  },
  {
    name: 'status-404',
    upstream: 'answers 404: unknown model',
    script: errorAnswer(
      404,
      'not_found_error',
      openAiError('invalid_request_error', 'model not found', 'model_not_found'),
    ),
    expected: { send: http(404, 'not_found_error'), stream: http(404, 'not_found_error') },
  },
  {
    name: 'status-408',
    upstream: 'answers 408',
    script: errorAnswer(408, 'timeout_error', openAiError('timeout', 'request timed out')),
    // A Messages error body keeps the upstream status; an OpenAI one is mapped to 504 (docs/protocol.md D.7).
    expected: {
      send: { anthropic: http(408, 'timeout_error', 2), tpx: http(504, 'timeout_error', 2) },
      stream: { anthropic: http(408, 'timeout_error', 2), tpx: http(504, 'timeout_error', 2) },
    },
  },
  {
    name: 'status-409',
    upstream: 'answers 409',
    script: errorAnswer(409, 'conflict_error', openAiError('conflict', 'conflict')),
    expected: { send: http(409, 'conflict_error', 2), stream: http(409, 'conflict_error', 2) },
  },
  {
    name: 'status-413',
    upstream: 'answers 413',
    script: errorAnswer(413, 'request_too_large', openAiError('invalid_request_error', 'request too large')),
    expected: { send: http(413, 'request_too_large'), stream: http(413, 'request_too_large') },
  },
  {
    name: 'status-422',
    upstream: 'answers 422 (FastAPI validation detail for tpx)',
    script: errorAnswer(422, 'invalid_request_error', {
      detail: [{ loc: ['body', 'messages'], msg: 'field required' }],
    }),
    expected: {
      send: { anthropic: http(422, 'invalid_request_error'), tpx: http(400, 'invalid_request_error') },
      stream: { anthropic: http(422, 'invalid_request_error'), tpx: http(400, 'invalid_request_error') },
    },
  },
  {
    name: 'status-429',
    upstream: 'answers 429 without retry-after',
    script: errorAnswer(
      429,
      'rate_limit_error',
      openAiError('rate_limit_error', 'Rate limit reached for requests', 'rate_limit_exceeded'),
    ),
    profile: 'patient',
    expected: { send: http(429, 'rate_limit_error', 2), stream: http(429, 'rate_limit_error', 2) },
    // Backoff: 500 ms for the first retry (the injected randomness takes no jitter off).
    checkSleeps: (sleeps) => expect(sleeps).toEqual([500]),
  },
  {
    name: 'status-429-retry-after',
    upstream: 'answers 429 with retry-after: 1',
    script: errorAnswer(
      429,
      'rate_limit_error',
      openAiError('rate_limit_error', 'wait', 'rate_limit_exceeded'),
      {
        'retry-after': '1',
      },
    ),
    profile: 'patient',
    expected: { send: http(429, 'rate_limit_error', 2), stream: http(429, 'rate_limit_error', 2) },
    checkSleeps: (sleeps) => expect(sleeps).toEqual([1000]),
    passedBack: { 'retry-after': '1' },
  },
  {
    name: 'status-429-retry-after-date',
    upstream: 'answers 429 with retry-after as an HTTP-date about two seconds ahead',
    script: (context) =>
      errorAnswer(429, 'rate_limit_error', openAiError('rate_limit_error', 'wait', 'rate_limit_exceeded'), {
        'retry-after': new Date(Date.now() + 2_000).toUTCString(),
      })(context),
    profile: 'patient',
    expected: { send: http(429, 'rate_limit_error', 2), stream: http(429, 'rate_limit_error', 2) },
    checkSleeps: (sleeps) => {
      expect(sleeps).toHaveLength(1);
      expect(sleeps[0]).toBeGreaterThan(500);
      expect(sleeps[0]).toBeLessThanOrEqual(2_000);
    },
  },
  {
    name: 'status-429-retry-after-too-long',
    upstream: 'answers 429 with retry-after: 30, longer than the time left',
    script: errorAnswer(
      429,
      'rate_limit_error',
      openAiError('rate_limit_error', 'wait', 'rate_limit_exceeded'),
      {
        'retry-after': '30',
      },
    ),
    profile: 'patient',
    // No retry can finish in time, so none is made: the caller sees the 429 and its hint at once.
    expected: { send: http(429, 'rate_limit_error'), stream: http(429, 'rate_limit_error') },
    checkSleeps: (sleeps) => expect(sleeps).toEqual([]),
    // Nor should the client retry it at once: the proxy says so.
    passedBack: { 'retry-after': '30', 'x-should-retry': 'false' },
  },
  {
    name: 'status-429-retry-after-long',
    upstream: 'answers 429 with retry-after: 90, more than a minute but within the total deadline',
    script: errorAnswer(
      429,
      'rate_limit_error',
      openAiError('rate_limit_error', 'wait', 'rate_limit_exceeded'),
      {
        'retry-after': '90',
      },
    ),
    profile: 'long',
    expected: { send: http(429, 'rate_limit_error', 2), stream: http(429, 'rate_limit_error', 2) },
    // Waited for as asked, not replaced by a short backoff: the deadline leaves room for it.
    checkSleeps: (sleeps) => expect(sleeps).toEqual([90_000]),
    passedBack: { 'retry-after': '90', 'x-should-retry': 'false' },
  },
  {
    name: 'status-429-retry-after-zero',
    upstream: 'answers 429 with retry-after: 0',
    script: errorAnswer(
      429,
      'rate_limit_error',
      openAiError('rate_limit_error', 'wait', 'rate_limit_exceeded'),
      {
        'retry-after': '0',
      },
    ),
    profile: 'patient',
    expected: { send: http(429, 'rate_limit_error', 2), stream: http(429, 'rate_limit_error', 2) },
    // "Now" after a failure is not taken literally: the usual backoff.
    checkSleeps: (sleeps) => expect(sleeps).toEqual([500]),
  },
  {
    name: 'status-429-says-overloaded',
    upstream:
      'answers 429 naming a rate limit (Anthropic `rate_limit_error`; OpenAI type `requests`, code `rate_limit_exceeded`) in a message saying overloaded, slow down',
    script: (context) =>
      step.json(
        context.provider === 'anthropic'
          ? anthropicError('rate_limit_error', 'Overloaded: please slow down')
          : openAiError('requests', 'The server is overloaded, please slow down', 'rate_limit_exceeded'),
        { status: 429, headers: CLOSE },
      ),
    profile: 'patient',
    // The status and the type say rate limit; the wording of the message does not change that.
    expected: { send: http(429, 'rate_limit_error', 2), stream: http(429, 'rate_limit_error', 2) },
    passedBack: { 'x-should-retry': 'false' },
  },
  {
    name: 'status-500',
    upstream: 'answers 500',
    script: errorAnswer(500, 'api_error', openAiError('server_error', 'internal error')),
    expected: { send: http(500, 'api_error', 2), stream: http(500, 'api_error', 2) },
  },
  {
    name: 'status-502',
    upstream: 'answers 502 with a JSON error body',
    script: errorAnswer(502, 'api_error', openAiError('server_error', 'bad gateway')),
    expected: { send: http(502, 'api_error', 2), stream: http(502, 'api_error', 2) },
  },
  {
    name: 'status-503',
    upstream: 'answers 503',
    script: errorAnswer(
      503,
      'overloaded_error',
      openAiError('service_unavailable_error', 'Service Unavailable'),
    ),
    expected: {
      send: { anthropic: http(503, 'overloaded_error', 2), tpx: http(529, 'overloaded_error', 2) },
      stream: { anthropic: http(503, 'overloaded_error', 2), tpx: http(529, 'overloaded_error', 2) },
    },
  },
  {
    name: 'status-504',
    upstream: 'answers 504',
    script: errorAnswer(504, 'timeout_error', openAiError('timeout', 'gateway timeout')),
    expected: { send: http(504, 'timeout_error', 2), stream: http(504, 'timeout_error', 2) },
  },
  {
    name: 'status-529',
    upstream: 'answers 529 (overloaded)',
    script: errorAnswer(
      529,
      'overloaded_error',
      openAiError('server_error', 'overloaded', 'server_is_overloaded'),
    ),
    expected: { send: http(529, 'overloaded_error', 2), stream: http(529, 'overloaded_error', 2) },
    // The proxy spent its retries: its client is told not to multiply them with its own.
    passedBack: { 'x-should-retry': 'false' },
  },
  {
    name: 'status-503-should-not-retry',
    upstream: 'answers 503 with x-should-retry: false',
    script: errorAnswer(503, 'overloaded_error', openAiError('service_unavailable_error', 'down'), {
      'x-should-retry': 'false',
    }),
    expected: {
      send: { anthropic: http(503, 'overloaded_error'), tpx: http(529, 'overloaded_error') },
      stream: { anthropic: http(503, 'overloaded_error'), tpx: http(529, 'overloaded_error') },
    },
  },
  {
    name: 'status-503-then-answer',
    upstream: 'answers 503 once, then correctly',
    script: (context) =>
      context.attempt === 0
        ? errorAnswer(503, 'overloaded_error', openAiError('service_unavailable_error', 'busy'))(context)
        : good(context),
    expected: { send: message(2), stream: message(2) },
  },
  {
    name: 'reset-then-answer',
    upstream: 'resets the first connection before the headers, then answers correctly',
    script: (context) => (context.attempt === 0 ? step.reset('before-headers') : good(context)),
    expected: { send: message(2), stream: message(2) },
  },
  {
    name: 'redirect',
    upstream: 'answers 302 with a location elsewhere',
    script: () => step.text(302, '', { location: 'http://127.0.0.1:9/elsewhere', ...CLOSE }),
    expected: { send: http(502, 'api_error'), stream: http(502, 'api_error') },
  },

  // --- errors inside a 200 ---------------------------------------------------------------------------
  {
    name: 'error-in-200-first',
    upstream: 'answers 200 whose first event (or whole JSON body) is an overloaded error object',
    script: (context) => {
      if (context.provider === 'anthropic') {
        const error = anthropicError('overloaded_error', 'Overloaded');
        return context.stream
          ? frames(context, [`event: error\ndata: ${JSON.stringify(error)}\n\n`])
          : step.json(error, { headers: CLOSE });
      }
      const error = openAiError('server_error', 'The server is overloaded', 'server_is_overloaded');
      return context.stream ? frames(context, openAiFrames([error])) : step.json(error, { headers: CLOSE });
    },
    expected: {
      send: http(529, 'overloaded_error', 2),
      // Nothing reached the caller yet, so the overloaded error is retried like a 529.
      stream: http(529, 'overloaded_error', 2),
    },
  },
  {
    name: 'error-in-200-mid-stream',
    upstream:
      'answers 200, sends text, then an error (Anthropic event: error api_error; Groq-style event: error with status_code 400); send: an error body with a status code inside',
    script: (context) => {
      if (context.provider === 'anthropic') {
        const error = anthropicError('api_error', 'Internal server error');
        if (!context.stream) return step.json(error, { headers: CLOSE });
        const list = anthropicFrames([anthropicStart(), ...anthropicTextBlock(0).slice(0, 2)]);
        return frames(context, [...list, `event: error\ndata: ${JSON.stringify(error)}\n\n`]);
      }
      const error = {
        error: {
          message: 'tool call validation failed',
          type: 'invalid_request_error',
          code: 'tool_use_failed',
          status_code: 400,
        },
      };
      if (!context.stream) return step.json(error, { headers: CLOSE });
      const list = openAiFrames(openAiTextChunks().slice(0, 2), false);
      return frames(context, [...list, `event: error\ndata: ${JSON.stringify(error)}\n\n`]);
    },
    expected: {
      send: { anthropic: http(500, 'api_error', 2), tpx: http(400, 'invalid_request_error') },
      stream: {
        anthropic: http(500, 'api_error', 1, true),
        tpx: http(400, 'invalid_request_error', 1, true),
      },
    },
  },
  {
    name: 'close-after-message-start',
    upstream: 'ends the response cleanly right after the first event (send: after half the JSON)',
    script: (context) =>
      context.stream
        ? frames(context, goodPrefix(context, 1))
        : step.text(200, halfBody(context), JSON_HEADERS),
    expected: { send: protocol(), stream: protocol(true) },
  },

  // --- tool calls -----------------------------------------------------------------------------------
  {
    name: 'duplicate-tool-ids',
    upstream: 'calls two tools with the same id',
    script: (context) =>
      toolAnswer(
        context,
        context.provider === 'anthropic'
          ? [
              { id: 'toolu_01Same', name: 'get_weather' },
              { id: 'toolu_01Same', name: 'get_weather', args: '{"city":"Oslo"}' },
            ]
          : [
              { id: 'call_same', name: 'get_weather' },
              { id: 'call_same', name: 'get_weather', args: '{"city":"Oslo"}' },
            ],
      ),
    expected: {
      send: { anthropic: protocol(), tpx: message() },
      stream: { anthropic: protocol(true), tpx: message() },
    },
    checkMessage: (delivered) => expectDistinctSafeToolIds(delivered, 2),
  },
  {
    name: 'missing-tool-ids',
    upstream: 'calls two tools without ids',
    script: (context) =>
      toolAnswer(context, [
        { id: undefined, name: 'get_weather' },
        { id: undefined, name: 'get_weather', args: '{"city":"Oslo"}' },
      ]),
    expected: {
      send: { anthropic: protocol(), tpx: message() },
      stream: { anthropic: protocol(true), tpx: message() },
    },
    checkMessage: (delivered) => expectDistinctSafeToolIds(delivered, 2),
  },
  {
    name: 'missing-tool-names',
    upstream: 'calls a tool without a name',
    script: (context) =>
      toolAnswer(context, [
        { id: context.provider === 'anthropic' ? 'toolu_01X' : 'call_x', name: undefined },
      ]),
    expected: { send: protocol(), stream: protocol(true) },
  },
  {
    name: 'unsafe-tool-ids',
    upstream: 'uses tool ids with characters outside [A-Za-z0-9_-], an empty id, and a 300-character id',
    providers: ['tpx'],
    script: (context) =>
      toolAnswer(context, [
        { id: 'call:1/ä b', name: 'get_weather' },
        { id: '', name: 'get_weather', args: '{"city":"Oslo"}' },
        { id: 'x'.repeat(300), name: 'get_weather', args: '{"city":"Rome"}' },
      ]),
    expected: { send: message(), stream: message() },
    checkMessage: (delivered) => expectDistinctSafeToolIds(delivered, 3),
  },
  {
    name: 'parallel-tool-calls',
    upstream: 'calls two tools at once; for tpx their argument fragments interleave',
    script: (context) => {
      if (context.provider === 'anthropic' || !context.stream) {
        return toolAnswer(context, [
          { id: context.provider === 'anthropic' ? 'toolu_01A' : 'call_a', name: 'get_weather' },
          {
            id: context.provider === 'anthropic' ? 'toolu_01B' : 'call_b',
            name: 'get_weather',
            args: '{"city":"Oslo"}',
          },
        ]);
      }
      const call = (index: number, fields: Parameters<typeof openAiToolCallDelta>[0]) =>
        openAiChunk({ tool_calls: [openAiToolCallDelta({ index, ...fields })] });
      return frames(
        context,
        openAiFrames([
          openAiChunk({ role: 'assistant', content: null }),
          call(0, { id: 'call_a', name: 'get_weather', arguments: '' }),
          call(1, { id: 'call_b', name: 'get_weather', arguments: '{"ci' }),
          call(0, { arguments: '{"city":' }),
          call(1, { arguments: 'ty":"Oslo"}' }),
          call(0, { arguments: '"Paris"}' }),
          openAiChunk({}, 'tool_calls'),
          openAiUsageChunk(),
        ]),
      );
    },
    expected: { send: message(), stream: message() },
    checkMessage: (delivered) => {
      expectDistinctSafeToolIds(delivered, 2);
      expect(toolUses(delivered).map((block) => block.input)).toEqual([{ city: 'Paris' }, { city: 'Oslo' }]);
    },
  },
  {
    name: 'invalid-tool-arguments',
    upstream: 'calls a tool with arguments that are not JSON ({"city": "Par) and stop reason tool_use',
    script: (context) =>
      toolAnswer(context, [
        {
          id: context.provider === 'anthropic' ? 'toolu_01Bad' : 'call_bad',
          name: 'get_weather',
          args: '{"city": "Par',
        },
      ]),
    expected: { send: protocol(), stream: protocol(true) },
  },
];

/** `textOf` for the harness: the text of a message's blocks. */
export { textOf, ANSWER_TEXT };
