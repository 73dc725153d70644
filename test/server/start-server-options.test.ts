/**
 * What each `startServer` option changes on the wire, over real HTTP on 127.0.0.1: the body limit, the
 * body and header idle timeouts, the ping interval, body logging, the loop guard's instance id, the
 * `Host` and `Origin` checks, keep-alive until the server closes, and the defaults when an option is
 * left out.
 */
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { TransportError } from '../../src/errors.js';
import { isTransportError } from '../../src/errors.js';
import type { Message, MessageStreamEvent } from '../../src/protocol/messages.js';
import {
  isLoopbackHost,
  startServer,
  type RunningServer,
  type ServeOptions,
} from '../../src/server/start-server.js';
import type { ModelTransport } from '../../src/transport/types.js';
import { captureLogs } from '../e2e/serve-support.js';

const open: RunningServer[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(open.splice(0).map((server) => server.close()));
});

const MESSAGE: Message = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'm',
  content: [{ type: 'text', text: 'Hi' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 1 },
};

const EVENTS: MessageStreamEvent[] = [
  { type: 'message_start', message: { ...MESSAGE, content: [], stop_reason: null } },
  { type: 'message_stop' },
];

const BODY = JSON.stringify({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] });

function fakeTransport(overrides: Partial<ModelTransport> = {}): ModelTransport {
  return {
    provider: 'anthropic',
    selection: { provider: 'anthropic', reason: 'ANTHROPIC_API_KEY is set' },
    send: () => Promise.resolve(MESSAGE),
    async *stream() {
      yield* EVENTS;
    },
    close: () => Promise.resolve(),
    ...overrides,
  };
}

async function start(options: Partial<ServeOptions> = {}): Promise<RunningServer> {
  const server = await startServer({ transport: fakeTransport(), port: 0, logger: false, ...options });
  open.push(server);
  return server;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function call(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      url,
      {
        method: options.method ?? 'GET',
        // A connection of its own per call: no reuse of one a previous server or test left behind.
        agent: false,
        headers: {
          ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...options.headers,
        },
      },
      (response) => {
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
      },
    );
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

/** A raw connection: what the server sent, and whether it closed the connection within a bound. */
async function rawConnection(port: number) {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  let received = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
  socket.on('error', () => undefined);
  const whenClosed = new Promise<void>((resolve) =>
    socket.on('close', () => {
      closed = true;
      resolve();
    }),
  );
  return {
    socket,
    get received() {
      return received;
    },
    /** Whether the server closed the connection within `ms` (a bound for the wait, not a timing check). */
    async closedWithin(ms: number): Promise<boolean> {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([whenClosed, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
      clearTimeout(timer);
      return closed;
    },
  };
}

function errorOf(body: string): { type: string; message: string } {
  return (JSON.parse(body) as { error: { type: string; message: string } }).error;
}

describe('isLoopbackHost', () => {
  it('takes brackets off only when they enclose the whole host', () => {
    expect(isLoopbackHost('[127.0.0.1x')).toBe(false);
    expect(isLoopbackHost('x127.0.0.1]')).toBe(false);
    expect(isLoopbackHost('[127.0.0.1]')).toBe(true);
  });
});

describe('options left out', () => {
  it('check the options given even when no port is', async () => {
    const error = await startServer({ transport: fakeTransport(), logger: false, maxRequestBytes: 0 }).catch(
      (thrown: unknown) => thrown,
    );
    expect(isTransportError(error) && [error.code, error.message]).toStrictEqual([
      'MODEL_ECONFIG',
      'maxRequestBytes must be a positive integer, got 0',
    ]);
  });

  it('log no request bodies by default', async () => {
    const logs = captureLogs();
    const server = await start({ logger: logs.logger });
    await call(`${server.url}/v1/messages`, { method: 'POST', body: BODY });
    const line = logs.lines().find((entry) => entry['msg'] === 'exchange');
    expect(line?.['status']).toBe(200);
    expect(line).not.toHaveProperty('requestBody');
  });

  it('keep a connection open between answers while the server runs', async () => {
    const server = await start();
    const answer = await call(`${server.url}/healthz`, { headers: { connection: 'keep-alive' } });
    expect([answer.status, answer.headers['connection']]).toStrictEqual([200, 'keep-alive']);
  });
});

describe('options given', () => {
  it('port 65535 is a port, not a mistake', async () => {
    const outcome = await start({ port: 65_535 }).catch((thrown: unknown) => thrown);
    // Someone else may hold the port; then the refusal names the address, not the range.
    if (isTransportError(outcome)) expect(outcome.message).toMatch(/^cannot listen on 127\.0\.0\.1:65535: /);
    else expect((outcome as RunningServer).port).toBe(65_535);
  });

  it('a port in use is refused with the system error as the cause', async () => {
    const first = await start();
    const error = await startServer({ transport: fakeTransport(), port: first.port, logger: false }).catch(
      (thrown: unknown) => thrown,
    );
    expect(isTransportError(error)).toBe(true);
    expect(((error as TransportError).cause as NodeJS.ErrnoException).code).toBe('EADDRINUSE');
  });

  it('maxRequestBytes refuses a larger body with 413', async () => {
    const server = await start({ maxRequestBytes: 10 });
    const answer = await call(`${server.url}/v1/messages`, { method: 'POST', body: BODY });
    expect(answer.status).toBe(413);
    expect(errorOf(answer.body).message).toBe(
      "the request body is larger than this proxy's limit of 10 bytes",
    );
  });

  it('logBodies logs the request body', async () => {
    const logs = captureLogs();
    const server = await start({ logger: logs.logger, logBodies: true });
    await call(`${server.url}/v1/messages`, { method: 'POST', body: BODY });
    const line = logs.lines().find((entry) => entry['msg'] === 'exchange');
    expect(line?.['requestBody']).toBe(BODY);
  });

  it('pingIntervalMs starts a silent stream with a ping after that interval', async () => {
    const server = await start({
      pingIntervalMs: 20,
      transport: fakeTransport({
        async *stream() {
          await new Promise((resolve) => setTimeout(resolve, 300));
          yield* EVENTS;
        },
      }),
    });
    const answer = await call(`${server.url}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify({ ...JSON.parse(BODY), stream: true }),
    });
    expect(answer.body.startsWith('event: ping\ndata: {"type": "ping"}\n\n')).toBe(true);
    expect(answer.body).toContain('event: message_stop');
  });

  it('bodyIdleTimeoutMs answers a body that stops arriving with 408', async () => {
    const server = await start({ bodyIdleTimeoutMs: 100 });
    const connection = await rawConnection(server.port);
    connection.socket.write(
      `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model"`,
    );
    expect(await connection.closedWithin(5_000)).toBe(true);
    expect(connection.received).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('bodyIdleTimeoutMs also cuts request headers that stop arriving', async () => {
    const server = await start({ bodyIdleTimeoutMs: 200 });
    const connection = await rawConnection(server.port);
    connection.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    expect(await connection.closedWithin(5_000)).toBe(true);
  });

  it('instanceId answers a request that already passed through this proxy with 508', async () => {
    const server = await start({ instanceId: 'instance-7' });
    const looped = await call(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'tpx-hop': 'other, instance-7' },
      body: BODY,
    });
    expect(looped.status).toBe(508);
    expect(errorOf(looped.body).message).toContain(`(${server.url})`);
    const other = await call(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'tpx-hop': 'other' },
      body: BODY,
    });
    expect(other.status).toBe(200);
  });
});

describe('the Host and Origin checks', () => {
  it('refuse a foreign Host without a proxy token, and serve any Host with one', async () => {
    const open = await start();
    const foreign = await call(`${open.url}/healthz`, { headers: { host: 'evil.example' } });
    expect(foreign.status).toBe(400);
    expect(errorOf(foreign.body).message).toMatch(/^this proxy is not served under the name "evil.example"/);
    const tokened = await start({ proxyToken: 'proxy-token' });
    expect((await call(`${tokened.url}/healthz`, { headers: { host: 'evil.example' } })).status).toBe(200);
  });

  it('serve a Host named in publicHosts', async () => {
    const server = await start({ publicHosts: ['proxy.example'] });
    expect((await call(`${server.url}/healthz`, { headers: { host: 'proxy.example' } })).status).toBe(200);
  });

  it('serve an Origin named in allowedOrigins, and refuse it otherwise', async () => {
    const origin = 'http://app.example';
    const plain = await start();
    expect((await call(`${plain.url}/healthz`, { headers: { origin } })).status).toBe(403);
    const allowing = await start({ allowedOrigins: [origin] });
    const answer = await call(`${allowing.url}/healthz`, { headers: { origin } });
    expect(answer.status).toBe(200);
    expect(answer.headers['access-control-allow-origin']).toBe(origin);
  });

  it('answer a request without Host in the Messages error shape', async () => {
    const server = await start();
    const connection = await rawConnection(server.port);
    connection.socket.write('GET /healthz HTTP/1.1\r\n\r\n');
    await connection.closedWithin(300);
    const [head = '', body = ''] = connection.received.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(body)).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'the request has no Host header' },
    });
  });
});

describe('closing', () => {
  it('waits for every exchange in flight, closing the connection of each, and no longer', async () => {
    const gates: (() => void)[] = [];
    const arrived: (() => void)[] = [];
    const bothArrived = new Promise<void>((resolve) => {
      let count = 0;
      arrived.push(() => (count += 1) === 2 && resolve());
    });
    const server = await startServer({
      port: 0,
      logger: false,
      // Far longer than the test may take: the close must follow the exchanges, not this.
      shutdownGraceMs: 60_000,
      transport: fakeTransport({
        send: async () => {
          await new Promise<void>((resolve) => {
            gates.push(resolve);
            arrived[0]!();
          });
          return MESSAGE;
        },
      }),
    });
    const ask = () =>
      call(`${server.url}/v1/messages`, {
        method: 'POST',
        headers: { connection: 'keep-alive' },
        body: BODY,
      });
    const first = ask();
    const second = ask();
    await bothArrived;
    const closing = server.close();
    gates[0]!();
    const firstAnswer = await first;
    expect([firstAnswer.status, firstAnswer.headers['connection']]).toStrictEqual([200, 'close']);
    // The second is still in flight: the close waits for it instead of cancelling it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    gates[1]!();
    const secondAnswer = await second;
    expect([secondAnswer.status, secondAnswer.headers['connection']]).toStrictEqual([200, 'close']);
    await closing;
  });
});
