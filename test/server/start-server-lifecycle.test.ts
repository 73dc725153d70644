/**
 * `startServer` over real HTTP on 127.0.0.1, with a transport whose answers each test sets: the options
 * it refuses and how, the lines it logs, where it listens, the start-up loop check, the readiness drain
 * and the graceful close.
 */
import { request as httpRequest } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isTransportError } from '../../src/errors.js';
import type { MessageStreamEvent } from '../../src/protocol/messages.js';
import { CANCELLATION, type WithCancellation } from '../../src/providers/cancellation.js';
import { pointsAtListener } from '../../src/server/loop-guard.js';
import {
  isLoopbackHost,
  startServer,
  type RunningServer,
  type ServeOptions,
} from '../../src/server/start-server.js';
import type { ExchangeOptions, ModelTransport, UpstreamPolicy } from '../../src/transport/types.js';
import { captureLogs } from '../e2e/serve-support.js';

const open: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((server) => server.close()));
});

function fakeTransport(overrides: Partial<ModelTransport> = {}): ModelTransport {
  return {
    provider: 'tpx',
    selection: { provider: 'tpx', reason: 'TPX_OAUTH_TOKEN is set' },
    send: () => Promise.reject(new Error('unused')),
    // eslint-disable-next-line require-yield
    async *stream() {
      throw new Error('unused');
    },
    close: () => Promise.resolve(),
    ...overrides,
  };
}

/** The upstream policy of a transport whose base URL is `baseUrl`. */
function policy(baseUrl: string | undefined): UpstreamPolicy {
  return {
    ...(baseUrl === undefined ? {} : { baseUrl }),
    modelRules: [],
    usesUpstreamModelList: false,
    capsToContextWindow: false,
    resolveModel: (requested) => Promise.resolve({ model: requested, reason: 'as requested' }),
  };
}

async function start(options: Partial<ServeOptions> = {}): Promise<RunningServer> {
  const server = await startServer({ transport: fakeTransport(), port: 0, logger: false, ...options });
  open.push(server);
  return server;
}

async function refusal(options: Partial<ServeOptions>): Promise<{ code: string; message: string }> {
  const error = await startServer({ transport: fakeTransport(), port: 0, logger: false, ...options }).then(
    async (server) => {
      await server.close();
      return undefined;
    },
    (thrown: unknown) => thrown,
  );
  if (!isTransportError(error)) throw new Error('expected the server to refuse to start');
  return { code: error.code, message: error.message };
}

async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('the options startServer refuses', () => {
  it.each([
    [{ port: -1 }, 'port must be an integer from 0 to 65535, got -1'],
    [{ port: 65_536 }, 'port must be an integer from 0 to 65535, got 65536'],
    [{ port: 80.5 }, 'port must be an integer from 0 to 65535, got 80.5'],
    [{ maxRequestBytes: 0 }, 'maxRequestBytes must be a positive integer, got 0'],
    [{ maxRequestBytes: 1.5 }, 'maxRequestBytes must be a positive integer, got 1.5'],
    [{ pingIntervalMs: -1 }, 'pingIntervalMs must be a number of milliseconds ≥ 0, got -1'],
    [{ pingIntervalMs: Number.NaN }, 'pingIntervalMs must be a number of milliseconds ≥ 0, got NaN'],
    [{ drainDelayMs: -1 }, 'drainDelayMs must be a number of milliseconds ≥ 0, got -1'],
    [
      { drainDelayMs: Number.POSITIVE_INFINITY },
      'drainDelayMs must be a number of milliseconds ≥ 0, got Infinity',
    ],
    [{ bodyIdleTimeoutMs: -1 }, 'bodyIdleTimeoutMs must be a number of milliseconds ≥ 0, got -1'],
    [{ bodyIdleTimeoutMs: Number.NaN }, 'bodyIdleTimeoutMs must be a number of milliseconds ≥ 0, got NaN'],
    [{ shutdownGraceMs: -1 }, 'shutdownGraceMs must be a number of milliseconds ≥ 0, got -1'],
    [{ shutdownGraceMs: Number.NaN }, 'shutdownGraceMs must be a number of milliseconds ≥ 0, got NaN'],
  ] as [Partial<ServeOptions>, string][])('refuses %j with MODEL_ECONFIG: %s', async (options, message) => {
    expect(await refusal(options)).toStrictEqual({ code: 'MODEL_ECONFIG', message });
  });

  it('accepts the edges of each range', async () => {
    const server = await start({
      maxRequestBytes: 1,
      pingIntervalMs: 0,
      drainDelayMs: 0,
      bodyIdleTimeoutMs: 0,
      shutdownGraceMs: 0,
    });
    expect(server.port).toBeGreaterThan(0);
  });

  it('refuses a port already in use, naming the address and the reason', async () => {
    const first = await start();
    expect(await refusal({ port: first.port })).toStrictEqual({
      code: 'MODEL_ECONFIG',
      message: `cannot listen on 127.0.0.1:${first.port}: EADDRINUSE`,
    });
  });

  it('refuses a non-loopback host without a token, but not with a token or insecureNoAuth', async () => {
    expect(await refusal({ host: '0.0.0.0' })).toStrictEqual({
      code: 'MODEL_ECONFIG',
      message:
        "refusing to listen on 0.0.0.0 without a proxy token: anyone who can reach it would use this proxy's model credentials. " +
        'Set TPX_PROXY_TOKEN (the proxyToken option) so that clients must present it, listen on 127.0.0.1, ' +
        'or pass --insecure-no-auth (insecureNoAuth) if the network is yours alone',
    });
    expect((await refusal({ host: '0.0.0.0', insecureNoAuth: false })).code).toBe('MODEL_ECONFIG');
    const withToken = await start({ host: '0.0.0.0', proxyToken: 'proxy-token' });
    expect(withToken.url).toBe(`http://0.0.0.0:${withToken.port}`);
    const insecure = await start({ host: '0.0.0.0', insecureNoAuth: true });
    expect(insecure.port).toBeGreaterThan(0);
  });
});

describe('isLoopbackHost', () => {
  it('reads bracketed and long-form IPv6 loopback addresses, in any case', () => {
    for (const host of ['[::1]', '0:0:0:0:0:0:0:1', '::FFFF:127.0.0.2', '[::ffff:127.0.0.1]', 'LocalHost']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of [
      '[::2]',
      '[localhost',
      'localhost]',
      '::ffff:10.0.0.1',
      '127.0.0.1.example',
      '[127.0.0.1]x',
    ]) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});

describe('where the proxy listens', () => {
  it('names an IPv6 address in brackets in its URL', async () => {
    const server = await start({ host: '::1' }).catch((error: unknown) => error);
    // A machine without IPv6 loopback cannot bind it; everything else must.
    if (isTransportError(server)) {
      expect(server.message).toMatch(/^cannot listen on ::1:0: /);
      return;
    }
    const running = server as RunningServer;
    expect(running.url).toBe(`http://[::1]:${running.port}`);
    expect((await get(`${running.url}/healthz`)).status).toBe(200);
  });

  it('logs where it listens, the provider, its reason and whether clients need a token, then that it closed', async () => {
    const logs = captureLogs();
    const server = await startServer({ transport: fakeTransport(), port: 0, logger: logs.logger });
    const tokened = await startServer({
      transport: fakeTransport(),
      port: 0,
      logger: logs.logger,
      proxyToken: 'proxy-token',
    });
    await server.close();
    await tokened.close();
    const lines = logs.lines().map(({ level, msg, url, provider, reason, inboundAuth }) => ({
      level,
      msg,
      url,
      provider,
      reason,
      inboundAuth,
    }));
    expect(lines).toStrictEqual([
      {
        level: 30,
        msg: 'listening',
        url: server.url,
        provider: 'tpx',
        reason: 'TPX_OAUTH_TOKEN is set',
        inboundAuth: 'none',
      },
      {
        level: 30,
        msg: 'listening',
        url: tokened.url,
        provider: 'tpx',
        reason: 'TPX_OAUTH_TOKEN is set',
        inboundAuth: 'proxy token',
      },
      {
        level: 30,
        msg: 'closed',
        url: server.url,
        provider: undefined,
        reason: undefined,
        inboundAuth: undefined,
      },
      {
        level: 30,
        msg: 'closed',
        url: tokened.url,
        provider: undefined,
        reason: undefined,
        inboundAuth: undefined,
      },
    ]);
  });

  it('treats an empty proxy token as none', async () => {
    const server = await start({ proxyToken: '' });
    expect((await get(`${server.url}/v1/models`)).status).toBe(404);
  });
});

describe('a base URL that is the proxy itself', () => {
  it.each([
    ['tpx', 'TPX_BASE_URL'],
    ['anthropic', 'ANTHROPIC_BASE_URL'],
  ] as const)(
    'is refused at start on the %s path, naming %s, and frees the port',
    async (provider, variable) => {
      const port = await freePort();
      const baseUrl = `http://localhost:${port}`;
      const transport = fakeTransport({ provider, upstreamPolicy: policy(baseUrl) });
      const error = await startServer({ transport, port, logger: false }).catch((thrown: unknown) => thrown);
      expect(isTransportError(error) && error.code).toBe('MODEL_ECONFIG');
      expect((error as Error).message).toBe(
        `${variable} (${baseUrl}) is this proxy's own address: it would forward every request to itself. ` +
          'Unset it in this shell (it was probably exported for a client: unset ANTHROPIC_BASE_URL ANTHROPIC_API_KEY), ' +
          'or point it at the real upstream',
      );
      const again = await start({ port });
      expect(again.port).toBe(port);
    },
  );

  it('is not refused when it names another port or has no base URL', async () => {
    const server = await start({
      transport: fakeTransport({ upstreamPolicy: policy('http://127.0.0.1:1') }),
    });
    expect(server.port).toBeGreaterThan(0);
    const bare = await start({ transport: fakeTransport({ upstreamPolicy: policy(undefined) }) });
    expect(bare.port).toBeGreaterThan(0);
  });
});

describe('pointsAtListener', () => {
  it('matches the same port on a host that reaches the listener', () => {
    expect(pointsAtListener('http://127.0.0.1:8787/v1', '127.0.0.1', 8787)).toBe(true);
    expect(pointsAtListener('http://localhost:8787', '127.0.0.1', 8787)).toBe(true);
    expect(pointsAtListener('http://app.localhost:8787', '127.0.0.1', 8787)).toBe(true);
    expect(pointsAtListener('http://[::1]:8787', '127.0.0.1', 8787)).toBe(true);
    // The URL parser writes an IPv4-mapped address in hex: [::ffff:7f00:1].
    expect(pointsAtListener('http://[::ffff:127.0.0.1]:8787', 'localhost', 8787)).toBe(true);
    expect(pointsAtListener('http://[::ffff:127.255.0.9]:8787', '127.0.0.1', 8787)).toBe(true);
    expect(pointsAtListener('http://127.0.0.1:8787', '::ffff:127.0.0.1', 8787)).toBe(true);
    expect(pointsAtListener('http://0.0.0.0:8787', '127.0.0.1', 8787)).toBe(true);
    expect(pointsAtListener('http://127.0.0.1:8787', '0.0.0.0', 8787)).toBe(true);
    expect(pointsAtListener('http://127.0.0.1:8787', '::', 8787)).toBe(true);
    expect(pointsAtListener('http://EXAMPLE.com:8787', 'example.com', 8787)).toBe(true);
    expect(pointsAtListener('http://[::1]:8787', '[::1]', 8787)).toBe(true);
  });

  it('uses the default port of the scheme', () => {
    expect(pointsAtListener('http://127.0.0.1', '127.0.0.1', 80)).toBe(true);
    expect(pointsAtListener('https://127.0.0.1', '127.0.0.1', 443)).toBe(true);
    expect(pointsAtListener('https://127.0.0.1', '127.0.0.1', 80)).toBe(false);
    expect(pointsAtListener('http://127.0.0.1', '127.0.0.1', 443)).toBe(false);
  });

  it('does not match another port, another host, or text that is not a URL', () => {
    expect(pointsAtListener('http://127.0.0.1:8788', '127.0.0.1', 8787)).toBe(false);
    expect(pointsAtListener('not a url', '127.0.0.1', 8787)).toBe(false);
    expect(pointsAtListener('http://example.com:8787', '127.0.0.1', 8787)).toBe(false);
    expect(pointsAtListener('http://10.1.2.3:8787', '127.0.0.1', 8787)).toBe(false);
    // A listener on one outside address is not reached through loopback.
    expect(pointsAtListener('http://127.0.0.1:8787', '192.0.2.1', 8787)).toBe(false);
    // An address that is not this machine's is not reached through the any-address listener.
    expect(pointsAtListener('http://192.0.2.1:8787', '0.0.0.0', 8787)).toBe(false);
    expect(pointsAtListener('http://192.0.2.1:8787', '127.0.0.1', 8787)).toBe(false);
    expect(pointsAtListener('http://[::ffff:10.0.0.1]:8787', '127.0.0.1', 8787)).toBe(false);
    expect(pointsAtListener('http://[::ffff:7f:1]:8787', '127.0.0.1', 8787)).toBe(false);
  });
});

describe('draining before close', () => {
  it('answers /readyz 503 during the drain delay while still serving, then closes', async () => {
    const logs = captureLogs();
    const server = await startServer({
      transport: fakeTransport(),
      port: 0,
      logger: logs.logger,
      drainDelayMs: 300,
    });
    expect(await get(`${server.url}/readyz`)).toMatchObject({ status: 200, body: '{"ready":true}' });
    const closing = server.close();
    expect(server.close()).toBe(closing);
    const during = await get(`${server.url}/readyz`);
    expect(during.status).toBe(503);
    expect(JSON.parse(during.body)).toStrictEqual({
      ready: false,
      reason: 'draining: finishing the exchanges in flight',
    });
    expect((await get(`${server.url}/healthz`)).status).toBe(200);
    await closing;
    await expect(get(`${server.url}/healthz`)).rejects.toThrow();
    const drain = logs
      .lines()
      .find((line) => line['msg'] === 'draining: /readyz answers 503, still accepting connections');
    expect(drain?.['drainDelayMs']).toBe(300);
  });
});

describe('closing with exchanges in flight', () => {
  const STREAM_BODY = JSON.stringify({
    model: 'm',
    max_tokens: 8,
    stream: true,
    messages: [{ role: 'user', content: 'Hi' }],
  });
  const START: MessageStreamEvent = {
    type: 'message_start',
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    },
  };

  it('cancels what still runs after the grace period, logging how many, and the client sees the stream end', async () => {
    let cancelledWith: unknown;
    const transport = fakeTransport({
      async *stream(_request, options: ExchangeOptions = {}) {
        yield START;
        await new Promise<void>((resolve) => {
          const cancellation = (options as WithCancellation)[CANCELLATION];
          cancellation?.onAbort(() => {
            cancelledWith = cancellation.reason;
            resolve();
          });
        });
      },
    });
    const logs = captureLogs();
    const server = await startServer({ transport, port: 0, logger: logs.logger, shutdownGraceMs: 50 });
    const body = await new Promise<string>((resolve, reject) => {
      const outgoing = httpRequest(
        `${server.url}/v1/messages`,
        { method: 'POST', headers: { 'content-type': 'application/json' } },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            if (chunks.length === 1) void server.close();
          });
          response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
          response.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
          response.on('aborted', () => resolve(Buffer.concat(chunks).toString('utf8')));
        },
      );
      outgoing.on('error', reject);
      outgoing.end(STREAM_BODY);
    });
    await server.close();
    expect(body).toMatch(/^event: message_start\n/);
    expect(isTransportError(cancelledWith) && [cancelledWith.code, cancelledWith.message]).toStrictEqual([
      'MODEL_EABORTED',
      'the proxy is shutting down',
    ]);
    const warning = logs
      .lines()
      .find((line) => line['msg'] === 'shutdown grace period over: cancelling exchanges in flight');
    expect(warning).toMatchObject({ level: 40, inFlight: 1, shutdownGraceMs: 50 });
  });

  it('closes at once, without the grace wait, when nothing is in flight', async () => {
    const server = await startServer({
      transport: fakeTransport(),
      port: 0,
      logger: false,
      shutdownGraceMs: 60_000,
    });
    expect((await get(`${server.url}/healthz`)).status).toBe(200);
    // Waiting for the grace period would outlast the test's time limit.
    await server.close();
  });
});
