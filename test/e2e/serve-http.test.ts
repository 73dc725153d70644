/**
 * `tpx serve` as an HTTP server: failures answered as Messages errors, inbound authentication, size
 * limits, routes, health, binding rules and graceful shutdown — over loopback, with the SDK where a
 * real client fits and plain HTTP where the request is one no SDK would send.
 */
import Anthropic from '@anthropic-ai/sdk';
import { request as httpRequest } from 'node:http';
import { connect, createServer as createNetServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isTransportError } from '../../src/errors.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { createTransport } from '../../src/transport/create-transport.js';
import type { ModelTransport } from '../../src/transport/types.js';
import { captureLogs, startTpxProxy, type TpxProxy } from './serve-support.js';

const HELLO = {
  model: 'claude-test',
  max_tokens: 64,
  messages: [{ role: 'user' as const, content: 'Hello' }],
};

let proxy: TpxProxy | undefined;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function serveTransport(transport: ModelTransport): Promise<RunningServer> {
  const server = await startServer({ transport, port: 0, logger: false });
  cleanups.push(async () => {
    await server.close();
    await transport.close();
  });
  return server;
}

/** A port on 127.0.0.1 nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function postJson(url: string, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as { error: { type: string; message: string } },
  };
}

describe('errors as Messages errors', () => {
  it('answers 502 api_error when the upstream cannot be reached', async () => {
    const port = await closedPort();
    const server = await serveTransport(
      createTransport({
        env: {},
        tpxToken: 'token',
        tpxBaseUrl: `http://127.0.0.1:${port}/v1`,
        maxRetries: 0,
      }),
    );
    const error = await new Anthropic({ baseURL: server.url, apiKey: 'k', maxRetries: 0 }).messages
      .create(HELLO)
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(Anthropic.InternalServerError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
    expect((error as InstanceType<typeof Anthropic.APIError>).type).toBe('api_error');
  });

  it('answers a body that is not JSON with 400 naming the problem', async () => {
    proxy = await startTpxProxy();
    const response = await postJson(`${proxy.server.url}/v1/messages`, '{"model": "claude-test", ');
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(response.body.error.message).toMatch(/^the request body is not valid JSON: /);
    expect(proxy.mock.requests).toHaveLength(0);
  });

  it('answers a request without max_tokens with 400 naming the field', async () => {
    proxy = await startTpxProxy();
    const response = await postJson(
      `${proxy.server.url}/v1/messages`,
      JSON.stringify({ model: 'claude-test', messages: [{ role: 'user', content: 'Hi' }] }),
    );
    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain('max_tokens');
    expect(proxy.mock.requests).toHaveLength(0);
  });

  it('answers 401 authentication_error when the proxy has no model credentials', async () => {
    const server = await serveTransport(createTransport({ env: {} }));
    const error = await new Anthropic({ baseURL: server.url, apiKey: 'k', maxRetries: 0 }).messages
      .create(HELLO)
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((error as InstanceType<typeof Anthropic.APIError>).message).toContain('ANTHROPIC_API_KEY');
  });

  it('answers count_tokens and models with 401 when the proxy has no model credentials', async () => {
    const server = await serveTransport(createTransport({ env: {} }));
    const client = new Anthropic({ baseURL: server.url, apiKey: 'k', maxRetries: 0 });
    const count = await client.messages
      .countTokens({ model: 'claude-test', messages: [] })
      .catch((thrown: unknown) => thrown);
    const models = await client.models.list().catch((thrown: unknown) => thrown);
    expect(count).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(models).toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it('answers unknown routes with 404 and wrong methods with 405, each with a request-id', async () => {
    proxy = await startTpxProxy();
    const missing = await fetch(`${proxy.server.url}/v1/complete`, { method: 'POST', body: '{}' });
    const wrong = await fetch(`${proxy.server.url}/v1/messages`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { type: string } }).error.type).toBe('not_found_error');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    await wrong.body?.cancel();
    for (const response of [missing, wrong])
      expect(response.headers.get('request-id')).toMatch(/^req_[A-Za-z0-9_-]{25,}$/);
  });
});

describe('the wire format', () => {
  it('frames a stream exactly as Anthropic does: an event line, a data line, a blank line, no [DONE]', async () => {
    proxy = await startTpxProxy({ mock: { script: { replies: [{ text: 'Wire check.' }] } } });
    const response = await fetch(`${proxy.server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...HELLO, stream: true }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    const text = await response.text();
    expect(text).not.toContain('[DONE]');
    const frames = text.split('\n\n');
    expect(frames.pop()).toBe('');
    const types: string[] = [];
    for (const frame of frames) {
      const match = /^event: ([a-z_]+)\ndata: (.+)$/.exec(frame);
      expect(match, frame).not.toBeNull();
      expect((JSON.parse(match![2]!) as { type: string }).type).toBe(match![1]);
      types.push(match![1]!);
    }
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
  });
});

describe('inbound authentication', () => {
  it('refuses a client without the proxy token with 401 and accepts it in either header', async () => {
    proxy = await startTpxProxy({ serve: { proxyToken: 'the-proxy-token' } });
    const { url } = proxy.server;
    const denied = await new Anthropic({ baseURL: url, apiKey: 'not-the-token', maxRetries: 0 }).messages
      .create(HELLO)
      .catch((thrown: unknown) => thrown);
    expect(denied).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(proxy.mock.requests).toHaveLength(0);

    const bearer = new Anthropic({ baseURL: url, authToken: 'the-proxy-token', maxRetries: 0 });
    const apiKey = new Anthropic({
      baseURL: url,
      apiKey: 'unused',
      defaultHeaders: { 'x-api-key': 'the-proxy-token', Authorization: null },
      maxRetries: 0,
    });
    expect((await bearer.messages.create(HELLO)).type).toBe('message');
    expect((await apiKey.messages.create(HELLO)).type).toBe('message');
    expect(proxy.mock.requests).toHaveLength(2);
  });

  it('answers /healthz without the proxy token and without secrets', async () => {
    proxy = await startTpxProxy({ serve: { proxyToken: 'the-proxy-token' } });
    const response = await fetch(`${proxy.server.url}/healthz`);
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(JSON.parse(text)).toEqual({
      ok: true,
      provider: 'tpx',
      reason: 'the tpxToken option is set and ANTHROPIC_API_KEY is not',
    });
    expect(text).not.toContain('the-proxy-token');
  });

  it('refuses to listen beyond loopback without a proxy token', async () => {
    const transport = createTransport({ env: {} });
    const error = await startServer({ transport, host: '0.0.0.0', port: 0, logger: false }).catch(
      (thrown: unknown) => thrown,
    );
    expect(isTransportError(error) && error.code).toBe('MODEL_ECONFIG');
    expect((error as Error).message).toContain('TPX_PROXY_TOKEN');
    await transport.close();
  });
});

describe('request size limit', () => {
  it('answers a body over maxRequestBytes with 413 request_too_large', async () => {
    proxy = await startTpxProxy({ serve: { maxRequestBytes: 1024 } });
    const error = await new Anthropic({ baseURL: proxy.server.url, apiKey: 'k', maxRetries: 0 }).messages
      .create({ ...HELLO, messages: [{ role: 'user', content: 'x'.repeat(4096) }] })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(413);
    expect((error as InstanceType<typeof Anthropic.APIError>).type).toBe('request_too_large');
    expect(proxy.mock.requests).toHaveLength(0);
  });

  it('stops reading a chunked body once it passes the limit and answers 413', async () => {
    proxy = await startTpxProxy({ serve: { maxRequestBytes: 64 * 1024 } });
    const { port } = proxy.server;
    const result = await new Promise<{ status: number; body: string; sentBytes: number }>(
      (resolve, reject) => {
        let sentBytes = 0;
        const request = httpRequest(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/v1/messages',
            headers: { 'content-type': 'application/json' },
          },
          (response) => {
            let body = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (body += chunk));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body, sentBytes }));
          },
        );
        request.on('error', reject);
        const chunk = Buffer.alloc(16 * 1024, 'x');
        // 64 MiB would be sent if the proxy kept reading; it answers long before.
        const write = () => {
          while (sentBytes < 64 * 1024 * 1024 && !request.destroyed) {
            sentBytes += chunk.length;
            if (!request.write(chunk)) {
              request.once('drain', write);
              return;
            }
          }
          request.end();
        };
        write();
      },
    );
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body).error.type).toBe('request_too_large');
    expect(result.sentBytes).toBeLessThan(64 * 1024 * 1024);
  });
});

describe('graceful shutdown', () => {
  it('lets a stream in flight finish while refusing new connections', async () => {
    proxy = await startTpxProxy({
      mock: { script: { replies: [{ text: 'alpha beta gamma delta epsilon zeta', chunk_delay_ms: 60 }] } },
    });
    const { server } = proxy;
    const client = new Anthropic({ baseURL: server.url, apiKey: 'k', maxRetries: 0 });
    const stream = client.messages.stream({ ...HELLO, stream: true });
    await new Promise<void>((resolve) => stream.once('streamEvent', () => resolve()));

    const closed = server.close();
    const refused = await new Promise<string>((resolve) => {
      const socket = connect(server.port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');

    const message = await stream.finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'alpha beta gamma delta epsilon zeta' }]);
    await closed;
    expect(proxy.mock.requests[0]!.aborted).toBe(false);
  });

  it('cuts off a stream still running when the grace period is over, aborting its upstream request', async () => {
    proxy = await startTpxProxy({
      mock: {
        script: {
          replies: [{ text: 'one two three four five six seven eight nine ten', chunk_delay_ms: 500 }],
        },
      },
      serve: { shutdownGraceMs: 100 },
    });
    const client = new Anthropic({ baseURL: proxy.server.url, apiKey: 'k', maxRetries: 0 });
    const stream = client.messages.stream({ ...HELLO, stream: true });
    await new Promise<void>((resolve) => stream.once('streamEvent', () => resolve()));
    const startedAt = Date.now();
    await proxy.server.close();
    expect(Date.now() - startedAt).toBeLessThan(2_000);
    await expect(stream.finalMessage()).rejects.toThrow();
    const mock = proxy.mock;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(mock.requests[0]!.aborted).toBe(true);
  });
});

describe('logs', () => {
  it('writes one exchange line per request with status and duration', async () => {
    const logs = captureLogs();
    const transport = createTransport({ env: {} });
    const server = await startServer({ transport, port: 0, logger: logs.logger });
    cleanups.push(async () => {
      await server.close();
      await transport.close();
    });
    await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(HELLO),
    });
    const exchanges = logs.lines().filter((line) => line['msg'] === 'exchange');
    expect(exchanges).toHaveLength(1);
    expect(exchanges[0]).toMatchObject({
      provider: 'none',
      status: 401,
      error: 'MODEL_EAUTH',
      model: 'claude-test',
    });
    expect(typeof exchanges[0]!['durationMs']).toBe('number');
  });
});
