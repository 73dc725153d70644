/**
 * Numbers in tool inputs and tool call arguments reach the other side as written, through `tpx serve`
 * on both paths and both directions: an integer beyond 2^53 and `1e400` (which a double rounds, or
 * turns into Infinity and then `null`) are sent upstream and answered back digit for digit. The
 * library hands such a number to its caller as an `ExactNumber`.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExactNumber, createTransport, type ModelTransport } from '../../src/index.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import {
  startScriptedServer,
  step,
  type RecordedRequest,
  type ScriptedServer,
} from '../helpers/scripted-server.js';

/** Tool input text with numbers a double cannot hold, beside ones it can. */
const EXACT_INPUT =
  '{"big":12345678901234567890123,"huge":1e400,"negative":-98765432109876543210,"precise":3.14159265358979323846264,"small":42,"half":0.5}';
/** The parts of {@link EXACT_INPUT} a double would change, each of which must be found as written. */
const EXACT_PARTS = [
  '"big":12345678901234567890123',
  '"huge":1e400',
  '"negative":-98765432109876543210',
  '"precise":3.14159265358979323846264',
];

function anthropicToolMessage(inputText: string): string {
  return `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"tool_use","id":"toolu_1","name":"lookup","input":${inputText}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`;
}

function chatToolCompletion(argumentsText: string): string {
  return JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: argumentsText } },
          ],
        },
        finish_reason: 'tool_calls',
      },
    ],
  });
}

function chatToolStream(argumentsText: string): string {
  const chunks = [
    {
      choices: [
        {
          index: 0,
          delta: {
            role: 'assistant',
            tool_calls: [
              { index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '' } },
            ],
          },
        },
      ],
    },
    {
      choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: argumentsText } }] } }],
    },
    { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
  ];
  return `${chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('')}data: [DONE]\n\n`;
}

/** A request whose history holds a tool call with {@link EXACT_INPUT}, as raw JSON text. */
function historyBody(extra = ''): string {
  return `{"model":"claude-test","max_tokens":16${extra},"tools":[{"name":"lookup","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"lookup","input":${EXACT_INPUT}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}]}`;
}

let upstream: ScriptedServer;

beforeAll(async () => {
  upstream = await startScriptedServer((record: RecordedRequest) => {
    const wantsStream = /"stream":\s*true/.test(record.bodyText);
    if (record.url.includes('chat/completions')) {
      return wantsStream
        ? step.text(200, chatToolStream(EXACT_INPUT), { 'content-type': 'text/event-stream' })
        : step.text(200, chatToolCompletion(EXACT_INPUT), { 'content-type': 'application/json' });
    }
    return step.text(200, anthropicToolMessage(EXACT_INPUT), { 'content-type': 'application/json' });
  });
});

afterAll(async () => {
  await upstream.close();
});

async function post(url: string, body: string): Promise<{ status: number; text: string }> {
  const response = await request(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { status: response.statusCode, text: await response.body.text() };
}

function expectExact(text: string, label: string): void {
  // The JSON may be written with or without spaces after the colons.
  const compact = text.replace(/":\s+/g, '":');
  for (const part of EXACT_PARTS) expect(compact, `${label}: ${part}`).toContain(part);
}

const PROVIDERS = [
  {
    name: 'anthropic',
    options: () => ({ anthropicApiKey: 'sk-ant-numbers', anthropicBaseUrl: upstream.url }),
  },
  {
    name: 'anthropic with a model map (the body is written again, not passed on)',
    options: () => ({
      anthropicApiKey: 'sk-ant-numbers',
      anthropicBaseUrl: upstream.url,
      modelMap: 'claude-*=claude-mapped',
    }),
  },
  { name: 'tpx', options: () => ({ tpxToken: 'tpx-numbers', tpxBaseUrl: `${upstream.url}/v1` }) },
] as const;

describe.each(PROVIDERS)('tpx serve, $name', ({ name, options }) => {
  let transport: ModelTransport;
  let server: RunningServer;

  beforeAll(async () => {
    transport = createTransport({ env: {}, maxRetries: 0, ...options() });
    server = await startServer({ transport, port: 0, logger: false });
  });
  afterAll(async () => {
    await server.close();
    await transport.close();
  });

  it('sends the numbers of a tool input upstream as written', async () => {
    const answer = await post(server.url, historyBody());
    expect(answer.status, answer.text).toBe(200);
    const sent = upstream.requests.at(-1)!;
    if (name.startsWith('anthropic with')) expect(sent.bodyText).toContain('claude-mapped');
    if (name === 'tpx') {
      const body = JSON.parse(sent.bodyText) as {
        messages: { tool_calls?: { function: { arguments: string } }[] }[];
      };
      const call = body.messages.find((message) => message.tool_calls !== undefined)!.tool_calls![0]!;
      expectExact(call.function.arguments, 'function arguments');
    } else {
      expectExact(sent.bodyText, 'upstream body');
    }
  });

  it('answers with the numbers of a tool call as the upstream wrote them, JSON and streamed', async () => {
    const json = await post(server.url, historyBody());
    expect(json.status).toBe(200);
    expectExact(json.text, 'JSON answer');
    if (name !== 'tpx') return; // the scripted Anthropic upstream answers JSON only
    const streamed = await post(server.url, historyBody(',"stream":true'));
    expect(streamed.status).toBe(200);
    // The arguments travel as input_json_delta text: escaped inside a JSON string.
    const deltas = [...streamed.text.matchAll(/"partial_json":("(?:[^"\\]|\\.)*")/g)]
      .map((match) => JSON.parse(match[1]!) as string)
      .join('');
    expectExact(deltas, 'streamed input');
  });
});

describe('tpx serve, a number the protocol needs as a number', () => {
  it('refuses one a double cannot hold with 400 invalid_request_error naming the field, sending nothing', async () => {
    const transport = createTransport({
      env: {},
      maxRetries: 0,
      tpxToken: 'tpx-numbers',
      tpxBaseUrl: `${upstream.url}/v1`,
    });
    const server = await startServer({ transport, port: 0, logger: false });
    try {
      const before = upstream.requests.length;
      for (const value of ['1e400', '12345678901234567890123']) {
        const answer = await post(
          server.url,
          `{"model":"claude-test","max_tokens":${value},"messages":[{"role":"user","content":"hi"}]}`,
        );
        expect(answer.status).toBe(400);
        expect(JSON.parse(answer.text)).toMatchObject({
          type: 'error',
          error: { type: 'invalid_request_error', message: expect.stringContaining('max_tokens') },
        });
      }
      expect(upstream.requests.length).toBe(before);
    } finally {
      await server.close();
      await transport.close();
    }
  });
});

describe('the library', () => {
  it('hands a tool call number a double cannot hold to its caller as an ExactNumber', async () => {
    const transport = createTransport({
      env: {},
      maxRetries: 0,
      tpxToken: 'tpx-numbers',
      tpxBaseUrl: `${upstream.url}/v1`,
    });
    try {
      const message = await transport.send(
        JSON.parse(historyBody()) as Parameters<ModelTransport['send']>[0],
      );
      const block = message.content.find((content) => content.type === 'tool_use');
      const input = (block as { input: Record<string, unknown> }).input;
      expect(input['big']).toBeInstanceOf(ExactNumber);
      expect(String(input['big'])).toBe('12345678901234567890123');
      expect(Number(input['big'])).toBe(Number('12345678901234567890123'));
      expect(String(input['huge'])).toBe('1e400');
      expect(Number(input['huge'])).toBe(Infinity);
      // Numbers a double holds stay plain numbers.
      expect(input['small']).toBe(42);
      expect(input['half']).toBe(0.5);
    } finally {
      await transport.close();
    }
  });

  it('sends an ExactNumber in a tool input upstream as its text', async () => {
    const transport = createTransport({
      env: {},
      maxRetries: 0,
      tpxToken: 'tpx-numbers',
      tpxBaseUrl: `${upstream.url}/v1`,
    });
    try {
      await transport.send({
        model: 'claude-test',
        max_tokens: 16,
        messages: [
          { role: 'user', content: 'go' },
          {
            role: 'assistant',
            content: [
              {
                type: 'tool_use',
                id: 'toolu_1',
                name: 'lookup',
                input: { big: new ExactNumber('12345678901234567890123'), small: 42 },
              },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
        ],
      });
      const body = JSON.parse(upstream.requests.at(-1)!.bodyText) as {
        messages: { tool_calls?: { function: { arguments: string } }[] }[];
      };
      const call = body.messages.find((message) => message.tool_calls !== undefined)!.tool_calls![0]!;
      expect(call.function.arguments).toBe('{"big":12345678901234567890123,"small":42}');
    } finally {
      await transport.close();
    }
  });
});
