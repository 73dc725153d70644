/**
 * JSON at the edges, through `tpx serve` on both paths: nesting deep enough to overflow a recursive walk
 * is a 400 `invalid_request_error` (never a 5xx about the call stack), bytes that are not UTF-8 are a
 * 400 (never replaced by U+FFFD and sent on), and an upstream answer nesting that deep is a 502 — with
 * nothing sent upstream for a refused request and the proxy still serving afterwards.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTransport, type ModelTransport } from '../../src/index.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import {
  startScriptedServer,
  step,
  type RecordedRequest,
  type ScriptedServer,
} from '../helpers/scripted-server.js';

const DEPTH = 100_000;

function anthropicMessage(input: unknown = undefined) {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content:
      input === undefined
        ? [{ type: 'text', text: 'ok' }]
        : [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input }],
    stop_reason: input === undefined ? 'end_turn' : 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
}

function openAiCompletion(argumentsText: string | undefined = undefined) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [
      {
        index: 0,
        message:
          argumentsText === undefined
            ? { role: 'assistant', content: 'ok' }
            : {
                role: 'assistant',
                content: null,
                tool_calls: [
                  { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: argumentsText } },
                ],
              },
        finish_reason: argumentsText === undefined ? 'stop' : 'tool_calls',
      },
    ],
  };
}

let upstream: ScriptedServer;
/** What the next upstream answer is, per path; `undefined` answers well. */
let nextAnswer: ((record: RecordedRequest) => ReturnType<typeof step.json>) | undefined;

beforeAll(async () => {
  upstream = await startScriptedServer((record) => {
    if (nextAnswer !== undefined) return nextAnswer(record);
    return step.json(record.url.includes('chat/completions') ? openAiCompletion() : anthropicMessage());
  });
});

afterAll(async () => {
  await upstream.close();
});

const PROVIDERS = [
  {
    name: 'anthropic',
    options: () => ({ anthropicApiKey: 'sk-ant-json-edges', anthropicBaseUrl: upstream.url }),
  },
  { name: 'tpx', options: () => ({ tpxToken: 'tpx-json-edges', tpxBaseUrl: `${upstream.url}/v1` }) },
] as const;

async function post(url: string, body: string | Uint8Array): Promise<{ status: number; body: string }> {
  const response = await request(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { status: response.statusCode, body: await response.body.text() };
}

function hello(content: unknown = 'Hello') {
  return { model: 'claude-test', max_tokens: 16, messages: [{ role: 'user', content }] };
}

describe.each(PROVIDERS)('$name', ({ name, options }) => {
  let transport: ModelTransport;
  let server: RunningServer;

  beforeAll(async () => {
    transport = createTransport({ env: {}, maxRetries: 0, ...options() });
    server = await startServer({ transport, port: 0, logger: false });
  });
  afterAll(async () => {
    nextAnswer = undefined;
    await server.close();
    await transport.close();
  });

  async function expectRefused(body: string | Uint8Array, label: string, message: RegExp): Promise<void> {
    const before = upstream.requests.length;
    const answer = await post(server.url, body);
    expect(answer.status, label).toBe(400);
    const parsed = JSON.parse(answer.body) as { type: string; error: { type: string; message: string } };
    expect(parsed.error.type, label).toBe('invalid_request_error');
    expect(parsed.error.message, label).toMatch(message);
    expect(answer.body, label).not.toMatch(/call stack/i);
    expect(upstream.requests.length, `${label}: nothing may be sent upstream`).toBe(before);
  }

  it('answers 400 invalid_request_error to 100,000 levels of nesting, wherever they are', async () => {
    const deepArray = '['.repeat(DEPTH) + ']'.repeat(DEPTH);
    const deepObject = '{"a":'.repeat(DEPTH) + '1' + '}'.repeat(DEPTH);
    const text = JSON.stringify(hello());
    const cases: [string, string][] = [
      ['a top-level field', text.replace('"max_tokens"', `"extra":${deepArray},"max_tokens"`)],
      ['the message content', text.replace('"Hello"', deepArray)],
      [
        'a tool input',
        JSON.stringify({
          ...hello(),
          messages: [
            { role: 'user', content: 'go' },
            { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: { x: 1 } }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
          ],
        }).replace('{"x":1}', deepObject),
      ],
      ['the whole body', deepArray],
    ];
    for (const [label, body] of cases) await expectRefused(body, label, /levels deep/);
    // Brackets inside strings are text, not nesting.
    const answer = await post(server.url, JSON.stringify(hello('['.repeat(5_000))));
    expect(answer.status).toBe(200);
  });

  it('answers 400 to bytes that are not UTF-8, never sending U+FFFD on', async () => {
    const text = JSON.stringify(hello('Hello XY'));
    const at = Buffer.from(text).indexOf('XY');
    const cases: [string, number[]][] = [
      ['a lone continuation byte', [0x80]],
      ['an invalid byte', [0xff]],
      ['an overlong encoding of "/"', [0xc0, 0xaf]],
      ['an encoded surrogate', [0xed, 0xa0, 0x80]],
      ['a truncated sequence', [0xe2, 0x82]],
      ['a code point past U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ];
    for (const [label, bytes] of cases) {
      const body = Buffer.concat([
        Buffer.from(text).subarray(0, at),
        Buffer.from(bytes),
        Buffer.from(text).subarray(at + 2),
      ]);
      await expectRefused(body, label, /UTF-8/);
    }
    // Valid multi-byte text goes through untouched.
    const answer = await post(server.url, JSON.stringify(hello('naïve 😀 文字')));
    expect(answer.status).toBe(200);
    expect(upstream.requests.at(-1)!.bodyText).toContain('naïve 😀 文字');
  });

  it('answers 502 api_error to an upstream answer nesting 100,000 levels deep, then serves on', async () => {
    const deep = '{"a":'.repeat(DEPTH) + '1' + '}'.repeat(DEPTH);
    nextAnswer = () =>
      name === 'anthropic'
        ? step.text(200, JSON.stringify(anthropicMessage({ x: 1 })).replace('{"x":1}', deep), {
            'content-type': 'application/json',
          })
        : step.text(200, JSON.stringify(openAiCompletion(deep)), { 'content-type': 'application/json' });
    try {
      const answer = await post(server.url, JSON.stringify(hello()));
      expect(answer.status).toBe(502);
      const parsed = JSON.parse(answer.body) as { error: { type: string; message: string } };
      expect(parsed.error.type).toBe('api_error');
      expect(parsed.error.message).toMatch(/levels deep/);
    } finally {
      nextAnswer = undefined;
    }
    expect((await post(server.url, JSON.stringify(hello()))).status).toBe(200);
  });
});
