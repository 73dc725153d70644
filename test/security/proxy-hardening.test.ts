/**
 * The proxy's defences: its token compared in constant time, no header injection through what a client
 * supplies (protocol headers, the query string), the request and response size limits, and no listening
 * on a non-loopback address without a token.
 */
import { readFileSync } from 'node:fs';
import * as crypto from 'node:crypto';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createTransport,
  isTransportError,
  type ModelTransport,
  type TransportOptions,
} from '../../src/index.js';
import { createProxyAuth } from '../../src/server/auth.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import {
  startScriptedServer,
  step,
  type RecordedRequest,
  type ScriptedServer,
} from '../helpers/scripted-server.js';

// Wraps `timingSafeEqual` in a spy so the tests can see it is what compares the proxy token.
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof crypto>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const PROXY_TOKEN = 'proxy-token-0123456789abcdef';

function hello(extra: Record<string, unknown> = {}) {
  return { model: 'claude-test', max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }], ...extra };
}

function anthropicMessage(text = 'ok') {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
}

function openAiCompletion(text = 'ok') {
  return { choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }] };
}

/** An upstream that answers every request well, for either provider (by the path it is called on). */
let upstream: ScriptedServer;

beforeAll(async () => {
  upstream = await startScriptedServer((record: RecordedRequest) =>
    step.json(record.url.includes('chat/completions') ? openAiCompletion() : anthropicMessage(), {
      headers: { connection: 'close' },
    }),
  );
});

afterAll(async () => {
  await upstream.close();
});

const PROVIDERS: { name: string; options: () => TransportOptions }[] = [
  {
    name: 'anthropic',
    options: () => ({ anthropicApiKey: 'sk-ant-hardening-key', anthropicBaseUrl: upstream.url }),
  },
  { name: 'tpx', options: () => ({ tpxToken: 'tpx-hardening-token', tpxBaseUrl: `${upstream.url}/v1` }) },
];

async function post(
  url: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const response = await request(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: response.statusCode, body: await response.body.text() };
}

// ---------------------------------------------------------------------------------------------------

describe('the proxy token', () => {
  it('is compared with timingSafeEqual, for right, wrong, shorter and longer candidates alike', () => {
    const spy = vi.mocked(crypto.timingSafeEqual);
    const check = createProxyAuth(PROXY_TOKEN);
    const sameLengthWrong = `${PROXY_TOKEN.slice(0, -1)}X`;
    const cases: [string, boolean][] = [
      [PROXY_TOKEN, true],
      [sameLengthWrong, false],
      [PROXY_TOKEN.slice(0, 5), false],
      [`${PROXY_TOKEN}-and-more`, false],
    ];
    for (const [candidate, accepted] of cases) {
      spy.mockClear();
      expect(check({ 'x-api-key': candidate })).toBe(accepted);
      expect(check({ authorization: `Bearer ${candidate}` })).toBe(accepted);
      // One comparison per header, of equal-length buffers, whatever the candidate's length: no shortcut
      // on a length mismatch that would leak the token's length.
      expect(spy).toHaveBeenCalledTimes(2);
      for (const [left, right] of spy.mock.calls)
        expect((left as Buffer).length).toBe((right as Buffer).length);
    }
  });

  it('is never compared with a plain string comparison (code check)', () => {
    const source = readFileSync(new URL('../../src/server/auth.ts', import.meta.url), 'utf8');
    expect(source).toMatch(/timingSafeEqual\(/);
    // The token is only ever compared with `undefined` (is there one?), never with a candidate.
    expect(source).not.toMatch(/(===|!==|==|!=)\s*(proxyToken|expected|digest)\b/);
    const operands = [...source.matchAll(/\b(?:proxyToken|expected)\s*(?:===|!==|==|!=)\s*([\w.'"`]+)/g)].map(
      (match) => match[1],
    );
    expect(operands.every((operand) => operand === 'undefined')).toBe(true);
    expect(source).not.toMatch(/\.equals\(|localeCompare\(/);
  });

  it('lets the right token in and answers 401 to equal-length wrong, different-length and missing tokens', async () => {
    const transport = createTransport({ env: {}, maxRetries: 0, ...PROVIDERS[1]!.options() });
    const server = await startServer({ transport, port: 0, logger: false, proxyToken: PROXY_TOKEN });
    try {
      const body = JSON.stringify(hello());
      const before = upstream.requests.length;
      expect((await post(server.url, body, { 'x-api-key': PROXY_TOKEN })).status).toBe(200);
      expect((await post(server.url, body, { authorization: `Bearer ${PROXY_TOKEN}` })).status).toBe(200);
      for (const wrong of [`${PROXY_TOKEN.slice(0, -1)}X`, 'x', `${PROXY_TOKEN}0`, '']) {
        const answer = await post(server.url, body, { 'x-api-key': wrong });
        expect(answer.status).toBe(401);
        expect(JSON.parse(answer.body)).toMatchObject({
          type: 'error',
          error: { type: 'authentication_error' },
        });
      }
      expect((await post(server.url, body)).status).toBe(401);
      // Only the two authorised requests went upstream.
      expect(upstream.requests.length - before).toBe(2);
    } finally {
      await server.close();
      await transport.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------------

describe.each(PROVIDERS)('$name: no header injection', ({ name, options }) => {
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

  function injected(record: RecordedRequest): boolean {
    return Object.keys(record.headers).some((header) => header.startsWith('x-injected'));
  }

  it('refuses (native) or drops (translated) protocol headers and queries with CR or LF in them', async () => {
    const attempts = [
      { headers: { 'anthropic-beta': 'tools-2024-04-04\r\nx-injected: 1' } },
      { headers: { 'anthropic-version': '2023-06-01\nx-injected-lf: 1' } },
      { headers: { 'anthropic-beta': ['ok', 'bad\r\nx-injected-array: 1'] } },
      { query: 'beta=true\r\nx-injected-query: 1' },
      { query: 'beta=true HTTP/1.1\r\nx-injected-query: 1\r\n' },
    ];
    for (const attempt of attempts) {
      const before = upstream.requests.length;
      const outcome = await transport.send(hello(), attempt).then(
        () => 'sent',
        (error: unknown) => (isTransportError(error) ? error.code : 'other'),
      );
      if (name === 'anthropic') {
        // The native path forwards these headers and the query, so it refuses them before sending.
        expect(outcome, JSON.stringify(attempt)).toBe('MODEL_EINVAL');
        expect(upstream.requests.length).toBe(before);
      } else {
        // The translated path forwards neither.
        expect(outcome).toBe('sent');
        expect(injected(upstream.requests.at(-1)!)).toBe(false);
      }
    }
  });

  /** Sends raw bytes to the proxy and reads until it closes the connection. */
  function raw(lines: string): Promise<string> {
    const address = new URL(server.url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(address.port), address.hostname);
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
      socket.setTimeout(5_000, () => socket.destroy());
      // Not `end()`: a client that half-closes is a client that went away. `connection: close` ends it.
      socket.write(lines);
    });
  }

  function rawRequest(target: string, extraHeaderLines: string): string {
    const body = JSON.stringify(hello());
    return (
      `POST ${target} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n${extraHeaderLines}\r\n${body}`
    );
  }

  it('passes a percent-encoded CRLF in the query on as data, never as a header line', async () => {
    const before = upstream.requests.length;
    const answer = await raw(rawRequest('/v1/messages?beta=true%0D%0Ax-injected:%201', ''));
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    const seen = upstream.requests.slice(before);
    expect(seen).toHaveLength(1);
    expect(injected(seen[0]!)).toBe(false);
    if (name === 'anthropic') expect(seen[0]!.url).toBe('/v1/messages?beta=true%0D%0Ax-injected:%201');
  });

  it('never turns a folded or CR-broken header from a client into an upstream header', async () => {
    const variants = [
      'anthropic-beta: tools-2024-04-04\r\n x-injected-fold: 1\r\n',
      'anthropic-beta: tools-2024-04-04\rx-injected-cr: 1\r\n',
      'anthropic-version: 2023-06-01\r\nx-injected-plain: 1\r\n',
    ];
    for (const variant of variants) {
      const before = upstream.requests.length;
      const answer = await raw(rawRequest('/v1/messages', variant));
      // node refuses the malformed ones with a 400; the last is an ordinary extra header, not forwarded.
      expect(answer).toMatch(/^HTTP\/1\.1 (200|400)/);
      for (const seen of upstream.requests.slice(before)) expect(injected(seen)).toBe(false);
    }
    // And the proxy is still serving.
    expect((await post(server.url, JSON.stringify(hello()))).status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------------

describe('size limits', () => {
  it('answers 413 to a request body over the limit, declared or chunked, without going upstream', async () => {
    const transport = createTransport({ env: {}, maxRetries: 0, ...PROVIDERS[0]!.options() });
    const server = await startServer({ transport, port: 0, logger: false, maxRequestBytes: 4_096 });
    try {
      const before = upstream.requests.length;
      const big = JSON.stringify(hello({ messages: [{ role: 'user', content: 'x'.repeat(8_000) }] }));
      const declared = await post(server.url, big);
      expect(declared.status).toBe(413);
      expect(JSON.parse(declared.body)).toMatchObject({
        type: 'error',
        error: { type: 'request_too_large' },
      });
      const chunked = await request(`${server.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        // A stream body goes out chunked, with no content-length to refuse it by.
        body: Readable.from(Array.from({ length: 8 }, () => Buffer.alloc(1_024, 0x20))),
      });
      expect(chunked.statusCode).toBe(413);
      await chunked.body.dump();
      expect(upstream.requests.length).toBe(before);
      expect((await post(server.url, JSON.stringify(hello()))).status).toBe(200);
    } finally {
      await server.close();
      await transport.close();
    }
  });

  it('stops reading an upstream answer at the response limit and says so', async () => {
    const huge = await startScriptedServer(() =>
      step.oversize(1024 * 1024, { headers: { 'content-type': 'application/json', connection: 'close' } }),
    );
    const transport = createTransport({
      env: {},
      maxRetries: 0,
      maxResponseBytes: 16 * 1024,
      anthropicApiKey: 'sk-ant-hardening-key',
      anthropicBaseUrl: huge.url,
    });
    const server = await startServer({ transport, port: 0, logger: false });
    try {
      const error = await transport.send(hello()).catch((caught: unknown) => caught);
      expect(isTransportError(error) && error.code).toBe('MODEL_ETOOBIG');
      const answer = await post(server.url, JSON.stringify(hello()));
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(JSON.parse(answer.body)).toMatchObject({ type: 'error' });
      expect(answer.body).toMatch(/limit/);
    } finally {
      await server.close();
      await transport.close();
      await huge.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------------

describe('listening address', () => {
  it('refuses a non-loopback address without a proxy token, and listens on nothing', async () => {
    const transport = createTransport({ env: {} });
    const listeningBefore = process
      .getActiveResourcesInfo()
      .filter((name) => name === 'TCPServerWrap').length;
    try {
      for (const host of ['0.0.0.0', '::', '[::]', '192.0.2.10']) {
        const refused = await startServer({ transport, host, port: 0, logger: false }).then(
          async (server) => {
            await server.close();
            return undefined;
          },
          (error: unknown) => error,
        );
        expect(isTransportError(refused) && refused.code, host).toBe('MODEL_ECONFIG');
        expect(String((refused as Error).message)).toMatch(/TPX_PROXY_TOKEN/);
      }
      expect(process.getActiveResourcesInfo().filter((name) => name === 'TCPServerWrap').length).toBe(
        listeningBefore,
      );
    } finally {
      await transport.close();
    }
  });

  it('still listens on loopback without a token', async () => {
    const transport = createTransport({ env: {} });
    const server = await startServer({ transport, host: '127.0.0.1', port: 0, logger: false });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await server.close();
    await transport.close();
  });
});
