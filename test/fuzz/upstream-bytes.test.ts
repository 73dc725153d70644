/**
 * Fuzzing what an upstream answers, for both providers and both entry points: arbitrary bytes under
 * arbitrary statuses and content types, event streams assembled from real and broken lines, and good
 * answers with one value replaced by an arbitrary one. Whatever comes, the caller gets a valid Messages
 * result (a message, or an event sequence that folds into one) or a `TransportError` with a Messages
 * error body — never another exception, never a hang.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTransport,
  isTransportError,
  validateMessage,
  validateStreamEvent,
  type MessageStreamEvent,
  type ModelTransport,
} from '../../src/index.js';
import { accumulateStream } from '../helpers/accumulate-stream.js';
import { createStreamGrammar } from '../../src/protocol/stream-grammar.js';
import { startScriptedServer, step, type ScriptedServer, type Step } from '../helpers/scripted-server.js';
import { faultRequest, goodBody, goodFrames, type UpstreamKind } from '../faults/fault-bodies.js';

/** Generous for one small local answer; a run that takes longer than this counts as a hang. */
const RUN_LIMIT_MS = 5_000;
const MESSAGES_ERROR_TYPES = new Set([
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'conflict_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'timeout_error',
  'overloaded_error',
]);

/** What the upstream answers next. */
interface Answer {
  status: number;
  contentType: string | undefined;
  chunks: readonly Uint8Array[];
}

let next: Answer = { status: 200, contentType: undefined, chunks: [] };
let upstream: ScriptedServer;
const transports = new Map<UpstreamKind, ModelTransport>();
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

function answerStep(answer: Answer): Step {
  return step.handle(async ({ response }) => {
    const headers: Record<string, string> = { connection: 'close' };
    if (answer.contentType !== undefined) headers['content-type'] = answer.contentType;
    response.writeHead(answer.status, headers);
    for (const chunk of answer.chunks) {
      if (response.destroyed) return;
      response.write(chunk);
      // A turn of the event loop between writes, so that chunks tend to arrive apart.
      await new Promise((resolve) => setImmediate(resolve));
    }
    response.end();
  });
}

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  upstream = await startScriptedServer(() => answerStep(next));
  const common = {
    env: {},
    maxRetries: 0,
    firstByteTimeoutMs: 2_000,
    idleTimeoutMs: 2_000,
    timeoutMs: 4_000,
    maxResponseBytes: 32 * 1024,
  };
  transports.set(
    'anthropic',
    createTransport({ ...common, anthropicApiKey: 'sk-ant-fuzz-key', anthropicBaseUrl: upstream.url }),
  );
  transports.set(
    'tpx',
    createTransport({ ...common, tpxToken: 'tpx-fuzz-token', tpxBaseUrl: `${upstream.url}/v1` }),
  );
});

afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  for (const transport of transports.values()) await transport.close();
  await upstream.close();
  expect(unhandled).toEqual([]);
});

function checkTransportError(error: unknown): void {
  if (!isTransportError(error)) throw new Error(`not a TransportError: ${String(error)}`, { cause: error });
  expect(error.body.type).toBe('error');
  expect(MESSAGES_ERROR_TYPES.has(error.body.error.type), error.body.error.type).toBe(true);
  expect(error.body.error.message).not.toBe('');
  expect(Number.isInteger(error.status)).toBe(true);
}

/** Runs one exchange against `answer` and checks whatever it ends in. */
async function exchange(
  provider: UpstreamKind,
  entry: 'send' | 'stream',
  answer: Answer,
): Promise<'ok' | 'error'> {
  next = answer;
  const transport = transports.get(provider)!;
  const run = async (): Promise<'ok' | 'error'> => {
    if (entry === 'send') {
      try {
        const message = await transport.send(faultRequest());
        const validated = validateMessage(message);
        expect(validated.ok, validated.ok ? '' : validated.message).toBe(true);
        return 'ok';
      } catch (error) {
        checkTransportError(error);
        return 'error';
      }
    }
    const events: MessageStreamEvent[] = [];
    const grammar = createStreamGrammar();
    let failure: unknown;
    try {
      for await (const event of transport.stream({ ...faultRequest(), stream: true })) {
        const validated = validateStreamEvent(event);
        expect(validated.ok, validated.ok ? '' : validated.message).toBe(true);
        expect(grammar.accept(event)).toBeUndefined();
        events.push(event);
      }
    } catch (error) {
      failure = error;
    }
    if (failure !== undefined) {
      checkTransportError(failure);
      return 'error';
    }
    expect(grammar.end()).toBeUndefined();
    const stop = events.find((event) => event.type === 'message_delta');
    // A tool call cut by the token limit may end in half a JSON value, as on Anthropic's own API.
    if (stop?.type !== 'message_delta' || stop.delta.stop_reason !== 'max_tokens') accumulateStream(events);
    return 'ok';
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      run(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`the exchange did not end within ${RUN_LIMIT_MS} ms`)),
          RUN_LIMIT_MS,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const provider = fc.constantFrom<UpstreamKind>('anthropic', 'tpx');
const entry = fc.constantFrom<'send' | 'stream'>('send', 'stream');
const contentType = fc.constantFrom(
  undefined,
  'application/json',
  'text/event-stream',
  'text/event-stream; charset=utf-8',
  'text/html',
  'text/plain',
);
const status = fc.constantFrom(
  200,
  200,
  200,
  200,
  201,
  204,
  302,
  400,
  401,
  404,
  413,
  429,
  500,
  502,
  503,
  529,
);

/** Splits a text into chunks at arbitrary byte offsets (multi-byte characters included). */
function splitAt(text: string, cuts: readonly number[]): Uint8Array[] {
  const bytes = Buffer.from(text);
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let last = 0;
  for (const point of points) {
    chunks.push(bytes.subarray(last, point));
    last = point;
  }
  chunks.push(bytes.subarray(last));
  return chunks.filter((chunk) => chunk.length > 0);
}

/** SSE lines, real and broken, for either protocol. */
function sseLine(kind: UpstreamKind) {
  const realFrames = goodFrames(kind, ['Hi', ' ✓ there', '🎉']);
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...realFrames) },
    { weight: 1, arbitrary: fc.jsonValue().map((value) => `data: ${JSON.stringify(value)}\n\n`) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.string(), fc.jsonValue())
        .map(([event, value]) => `event: ${event}\ndata: ${JSON.stringify(value)}\n\n`),
    },
    { weight: 1, arbitrary: fc.string().map((text) => `data: ${text}\n`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '\n',
        '\r\n',
        '\r',
        '\n\n',
        ': keep-alive\n\n',
        'data: [DONE]\n\n',
        'retry: x\n',
        'id: 7\n',
        'event: error\n',
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(...realFrames)
        .chain((frame) => fc.nat(frame.length).map((cut) => frame.slice(0, cut))),
    },
  );
}

/**
 * The SSE lines of one stream: most runs a free mix of real and broken lines; one run in four the real
 * stream whole and in order, with keep-alive comments and blank lines slipped between its frames — an
 * answer a streaming reader must accept, drawn often enough that both outcomes show up under any seed.
 */
function sseLines(kind: UpstreamKind) {
  const realFrames = goodFrames(kind, ['Hi', ' ✓ there', '🎉']);
  const harmless = fc.constantFrom(': keep-alive\n\n', '\n', ': ping\n\n');
  const wholeStream = fc
    .array(fc.tuple(fc.nat(realFrames.length), harmless), { maxLength: 4 })
    .map((insertions) => {
      const lines = [...realFrames];
      for (const [at, line] of insertions.sort((a, b) => b[0] - a[0])) lines.splice(at, 0, line);
      return lines;
    });
  return fc.oneof(
    {
      weight: 3,
      arbitrary: fc.array(sseLine(kind), { maxLength: 14 }).map((lines) => ({ lines, whole: false })),
    },
    { weight: 1, arbitrary: wholeStream.map((lines) => ({ lines, whole: true })) },
  );
}

/** Every path (key sequence) to a value inside a JSON value. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const found: (string | number)[][] = [prefix];
  if (Array.isArray(value)) value.forEach((item, index) => found.push(...paths(item, [...prefix, index])));
  else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) found.push(...paths(item, [...prefix, key]));
  }
  return found;
}

/** A copy of `value` with the value at `path` replaced. */
function replaced(value: unknown, path: readonly (string | number)[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<
    string | number,
    unknown
  >;
  const [head, ...rest] = path as [string | number, ...(string | number)[]];
  copy[head] = replaced(copy[head], rest, replacement);
  return copy;
}

/** A good JSON answer, or one event of a good stream, with one value anywhere in it replaced. */
function mutatedAnswer(kind: UpstreamKind, streaming: boolean) {
  if (!streaming) {
    const body = goodBody(kind);
    const all = paths(body);
    return fc
      .tuple(fc.nat(all.length - 1), fc.jsonValue())
      .map(([index, value]) => JSON.stringify(replaced(body, all[index]!, value)));
  }
  const frames = goodFrames(kind);
  const events = frames.map((frame) => {
    const data = frame
      .split('\n')
      .find((line) => line.startsWith('data: '))!
      .slice(6);
    return { frame, data };
  });
  return fc
    .tuple(fc.nat(events.length - 1), fc.nat(), fc.jsonValue())
    .map(([eventIndex, pathIndex, value]) => {
      const target = events[eventIndex]!;
      if (target.data === '[DONE]') return frames.join('');
      const payload = JSON.parse(target.data) as unknown;
      const all = paths(payload);
      const mutated = JSON.stringify(replaced(payload, all[pathIndex % all.length]!, value));
      return frames
        .map((frame) => (frame === target.frame ? frame.replace(target.data, mutated) : frame))
        .join('');
    });
}

describe('fuzzed upstream answers', () => {
  it('arbitrary bytes, statuses and content types', async () => {
    await fc.assert(
      fc.asyncProperty(
        provider,
        entry,
        status,
        contentType,
        fc.array(fc.uint8Array({ maxLength: 256 }), { maxLength: 6 }),
        async (kind, how, code, type, chunks) => {
          await exchange(kind, how, { status: code, contentType: type, chunks });
        },
      ),
      { numRuns: 120 },
    );
  });

  it('event streams assembled from real and broken lines, split anywhere', async () => {
    const outcomes = { ok: 0, error: 0 };
    await fc.assert(
      fc.asyncProperty(
        provider.chain((kind) => fc.tuple(fc.constant(kind), sseLines(kind))),
        entry,
        fc.array(fc.nat(), { maxLength: 6 }),
        async ([kind, { lines, whole }], how, cuts) => {
          const chunks = splitAt(lines.join(''), cuts);
          const outcome = await exchange(kind, how, {
            status: 200,
            contentType: 'text/event-stream',
            chunks,
          });
          if (whole && how === 'stream') expect(outcome).toBe('ok');
          outcomes[outcome]++;
        },
      ),
      { numRuns: 200 },
    );
    expect(outcomes.ok).toBeGreaterThan(5);
    expect(outcomes.error).toBeGreaterThan(5);
  });

  it('good answers with one value replaced by an arbitrary one', async () => {
    const outcomes = { ok: 0, error: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc
          .tuple(provider, entry)
          .chain(([kind, how]) =>
            fc.tuple(fc.constant(kind), fc.constant(how), mutatedAnswer(kind, how === 'stream')),
          ),
        fc.array(fc.nat(), { maxLength: 4 }),
        async ([kind, how, text], cuts) => {
          const type = how === 'stream' ? 'text/event-stream' : 'application/json';
          outcomes[
            await exchange(kind, how, { status: 200, contentType: type, chunks: splitAt(text, cuts) })
          ]++;
        },
      ),
      { numRuns: 200 },
    );
    expect(outcomes.ok).toBeGreaterThan(5);
    expect(outcomes.error).toBeGreaterThan(5);
  });
});
