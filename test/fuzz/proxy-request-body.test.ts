/**
 * Fuzzing `tpx serve` with what a caller may send as a request body: arbitrary JSON values, arbitrary
 * bytes, and objects shaped almost like a Messages request. The answer is always a 4xx Messages error
 * with a message that says something, or — when the body happens to be a valid request — a valid
 * answer (a message, or a complete event stream); never a 5xx, never a dropped connection. The upstream
 * is `tpx mock-model`, which answers every valid request.
 */
import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTransport,
  validateMessage,
  validateStreamEvent,
  type MessageStreamEvent,
  type ModelTransport,
} from '../../src/index.js';
import { startMockModel, type MockModelServer } from '../../src/mock-model/index.js';
import { accumulateStream } from '../helpers/accumulate-stream.js';
import { createStreamGrammar } from '../../src/protocol/stream-grammar.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';

const MOCK_TOKEN = 'fuzz-mock-token-0123';

let mock: MockModelServer;
let transport: ModelTransport;
let server: RunningServer;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  mock = await startMockModel({ token: MOCK_TOKEN });
  transport = createTransport({
    env: {},
    tpxToken: MOCK_TOKEN,
    tpxBaseUrl: mock.url,
    maxRetries: 0,
    timeoutMs: 10_000,
  });
  server = await startServer({ transport, port: 0, logger: false, maxRequestBytes: 256 * 1024 });
});

afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await server.close();
  await transport.close();
  await mock.close();
  expect(unhandled).toEqual([]);
});

/** Splits an SSE body into `{event, data}` frames (the proxy always writes `\n` line ends). */
function frames(body: string): { event: string; data: string }[] {
  return body
    .split('\n\n')
    .filter((frame) => frame.trim() !== '')
    .map((frame) => {
      const lines = frame.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice(7) ?? '';
      const data = lines
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      return { event, data };
    });
}

function checkErrorBody(body: string, status: number): void {
  const parsed = JSON.parse(body) as { type?: unknown; error?: { type?: unknown; message?: unknown } };
  expect(parsed.type, body).toBe('error');
  expect(typeof parsed.error?.type).toBe('string');
  // A message that says what was wrong, not just "error".
  expect(typeof parsed.error?.message).toBe('string');
  expect(String(parsed.error?.message).length, `status ${status}: ${body}`).toBeGreaterThanOrEqual(15);
}

/** Posts `body` and checks the answer: a 4xx Messages error, or a valid message / complete stream. */
async function postAndCheck(body: string | Uint8Array): Promise<'answered' | 'refused'> {
  const response = await request(`${server.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const text = await response.body.text();
  const status = response.statusCode;
  expect(status, text).toBeLessThan(500);
  if (status !== 200) {
    expect(status).toBeGreaterThanOrEqual(400);
    checkErrorBody(text, status);
    return 'refused';
  }
  const contentType = String(response.headers['content-type']);
  if (contentType.includes('text/event-stream')) {
    const events = frames(text).map((frame) => {
      expect(frame.event, text).not.toBe('error');
      const event = JSON.parse(frame.data) as MessageStreamEvent;
      expect(event.type).toBe(frame.event);
      const validated = validateStreamEvent(event);
      expect(validated.ok, validated.ok ? '' : validated.message).toBe(true);
      return event;
    });
    const grammar = createStreamGrammar();
    for (const event of events) expect(grammar.accept(event)).toBeUndefined();
    expect(grammar.end()).toBeUndefined();
    accumulateStream(events);
  } else {
    const validated = validateMessage(JSON.parse(text));
    expect(validated.ok, validated.ok ? '' : validated.message).toBe(true);
  }
  return 'answered';
}

/** Content blocks, from well-formed to odd. */
const contentBlock = fc.oneof(
  fc.record({ type: fc.constant('text'), text: fc.string() }),
  fc.record({
    type: fc.constant('image'),
    source: fc.record({ type: fc.constantFrom('base64', 'url'), data: fc.string() }),
  }),
  fc.record({
    type: fc.constant('tool_use'),
    id: fc.string(),
    name: fc.string(),
    input: fc.dictionary(fc.string(), fc.jsonValue()),
  }),
  fc.record({
    type: fc.constant('tool_result'),
    tool_use_id: fc.string(),
    content: fc.oneof(fc.string(), fc.jsonValue()),
  }),
  fc.record({
    type: fc.constantFrom('thinking', 'redacted_thinking', 'document', 'server_tool_use', 'mystery'),
    thinking: fc.string(),
  }),
  fc.jsonValue(),
);

const message = fc.record(
  {
    role: fc.oneof(fc.constantFrom('user', 'assistant', 'system'), fc.jsonValue()),
    content: fc.oneof(fc.string(), fc.array(contentBlock, { maxLength: 4 }), fc.jsonValue()),
  },
  { requiredKeys: [] },
);

const tool = fc.record(
  {
    name: fc.oneof(fc.string(), fc.jsonValue()),
    description: fc.string(),
    input_schema: fc.oneof(fc.constant({ type: 'object' }), fc.dictionary(fc.string(), fc.jsonValue())),
  },
  { requiredKeys: [] },
);

/** A valid Messages request, with or without the optional fields. */
const validRequest = fc.record(
  {
    model: fc.oneof(fc.constant('claude-test'), fc.string({ minLength: 1, maxLength: 40 })),
    max_tokens: fc.integer({ min: 1, max: 4_096 }),
    messages: fc.oneof(
      fc.string().map((text) => [{ role: 'user', content: text }]),
      fc.constant([
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } }],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A', content: 'sunny' }] },
      ]),
    ),
    stream: fc.boolean(),
    system: fc.string(),
    tools: fc.constant([
      { name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
    ]),
    temperature: fc.double({ min: 0, max: 1, noNaN: true }),
    stop_sequences: fc.array(fc.string({ minLength: 1 }), { maxLength: 3 }),
  },
  { requiredKeys: ['model', 'max_tokens', 'messages'] },
);

/** One change to a request: a field set to something arbitrary (or plausible but wrong), or removed. */
const mutation = fc.record({
  key: fc.oneof(
    fc.constantFrom(
      'model',
      'max_tokens',
      'messages',
      'stream',
      'system',
      'tools',
      'tool_choice',
      'temperature',
    ),
    fc.constantFrom(
      'stop_sequences',
      'thinking',
      'metadata',
      'top_k',
      'output_config',
      '__proto__',
      'constructor',
    ),
    fc.string(),
  ),
  value: fc.oneof(
    fc.constant(undefined),
    fc.jsonValue(),
    fc.array(message, { maxLength: 4 }),
    fc.array(tool, { maxLength: 3 }),
    fc.record({
      type: fc.constantFrom('auto', 'any', 'none', 'tool', 'enabled', 'adaptive'),
      name: fc.string(),
      budget_tokens: fc.integer(),
    }),
  ),
});

/** Objects close to a Messages request: a valid one with up to three fields changed or removed. */
const nearRequest = fc.tuple(validRequest, fc.array(mutation, { maxLength: 3 })).map(([base, changes]) => {
  const changed: Record<string, unknown> = { ...base };
  for (const { key, value } of changes) {
    if (value === undefined) delete changed[key];
    // defineProperty: a plain assignment to "__proto__" would set the prototype, not a key.
    else Object.defineProperty(changed, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return changed;
});

describe('tpx serve, fuzzed request bodies', () => {
  it('answers arbitrary JSON values with a 4xx Messages error, or a valid answer', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        await postAndCheck(JSON.stringify(value));
      }),
      { numRuns: 150 },
    );
  });

  it('answers arbitrary bytes with a 4xx Messages error', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2_048 }), async (bytes) => {
        await postAndCheck(bytes);
      }),
      { numRuns: 150 },
    );
  });

  it('answers near-valid requests with a 4xx Messages error, or a valid message or stream', async () => {
    const outcomes = { answered: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(nearRequest, async (value) => {
        outcomes[await postAndCheck(JSON.stringify(value))]++;
      }),
      { numRuns: 250 },
    );
    // Both branches were exercised, so neither check above was vacuous.
    expect(outcomes.answered).toBeGreaterThan(10);
    expect(outcomes.refused).toBeGreaterThan(10);
  });
});
