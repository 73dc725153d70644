/**
 * The `node:http` adapter with a handler each test writes, over real sockets on 127.0.0.1: what the
 * handler is given, how the body is read (once, within the size limit and the idle timeout), how JSON
 * and SSE answers go out, and when a connection is kept or closed.
 */
import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import { connect, Socket, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isTransportError } from '../../src/errors.js';
import type { Cancellation } from '../../src/providers/cancellation.js';
import {
  createNodeListener,
  responseStartedOn,
  type NodeListenerOptions,
} from '../../src/server/node-adapter.js';
import type { InboundRequest, ProxyHandler, ProxyResponse } from '../../src/server/types.js';

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

async function serve(handler: ProxyHandler, options: Partial<NodeListenerOptions> = {}): Promise<number> {
  const server = createServer(createNodeListener(handler, { maxRequestBytes: 1_000, ...options }));
  // node's own idle keep-alive timeout (5 s) would close a connection the adapter meant to keep or to
  // cut: set far off, every close seen here is the adapter's.
  server.keepAliveTimeout = 120_000;
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A raw connection that collects everything the server sends until it closes. */
async function rawConnection(port: number) {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  let received = '';
  let closed = false;
  const waiters: (() => void)[] = [];
  const notify = () => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('utf8');
    notify();
  });
  socket.on('close', () => {
    closed = true;
    notify();
  });
  socket.on('error', () => undefined);
  return {
    socket,
    get received() {
      return received;
    },
    get closed() {
      return closed;
    },
    /** Waits until `condition` holds on what arrived (or the socket closed). */
    async until(condition: (text: string) => boolean): Promise<string> {
      while (!condition(received) && !closed) await new Promise<void>((resolve) => waiters.push(resolve));
      return received;
    },
    /** Whether the server closed the connection within `ms` (a bound for a wait, not a timing check). */
    async closedWithin(ms: number): Promise<boolean> {
      const deadline = setTimeout(notify, ms);
      const started = Date.now();
      while (!closed && Date.now() - started < ms)
        await new Promise<void>((resolve) => waiters.push(resolve));
      clearTimeout(deadline);
      return closed;
    },
  };
}

function json(body: string, status = 200): ProxyResponse {
  return { kind: 'json', status, headers: { 'content-type': 'application/json' }, body };
}

function head(text: string): { status: number; headers: Record<string, string> } {
  const [statusLine = '', ...lines] = text.split('\r\n\r\n')[0]!.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers };
}

function bodyOf(text: string): string {
  return text.split('\r\n\r\n').slice(1).join('\r\n\r\n');
}

describe('what the handler is given', () => {
  it('the method, target, headers as parsed and as sent, and the body once', async () => {
    let seen: InboundRequest | undefined;
    let second: unknown;
    let body = '';
    const port = await serve(async (request) => {
      seen = request;
      body = Buffer.from(await request.readBody()).toString('utf8');
      second = await request.readBody().catch((error: unknown) => error);
      return json('{}');
    });
    const connection = await rawConnection(port);
    connection.socket.write(
      'POST /v1/messages?beta=true HTTP/1.1\r\nHost: localhost\r\nX-Mixed-Case: A\r\nContent-Length: 7\r\n\r\n{"a":1}',
    );
    await connection.until((text) => text.endsWith('{}'));
    expect([seen?.method, seen?.url, seen?.headers['x-mixed-case']]).toStrictEqual([
      'POST',
      '/v1/messages?beta=true',
      'A',
    ]);
    expect(seen?.rawHeaders).toStrictEqual(['Host', 'localhost', 'X-Mixed-Case', 'A', 'Content-Length', '7']);
    expect(body).toBe('{"a":1}');
    expect((second as Error).message).toBe('the request body can be read only once');
    expect(seen?.signal.aborted).toBe(false);
  });

  it('a body sent in several chunks, whole and in order', async () => {
    let body = '';
    const port = await serve(async (request) => {
      body = Buffer.from(await request.readBody()).toString('utf8');
      return json('{}');
    });
    const connection = await rawConnection(port);
    connection.socket.write(
      'POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n',
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    connection.socket.write('4\r\ndefg\r\n0\r\n\r\n');
    await connection.until((text) => text.endsWith('{}'));
    expect(body).toBe('abcdefg');
  });

  it('an empty body as zero bytes', async () => {
    let length = -1;
    const port = await serve(async (request) => {
      length = (await request.readBody()).length;
      return json('{}');
    });
    const connection = await rawConnection(port);
    connection.socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n');
    await connection.until((text) => text.endsWith('{}'));
    expect(length).toBe(0);
  });
});

describe('JSON answers', () => {
  it('go out with their status, headers and exact content-length, and keep the connection', async () => {
    const port = await serve(() => Promise.resolve(json('{"é":1}', 201)));
    const connection = await rawConnection(port);
    connection.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const text = await connection.until((received) => received.endsWith('{"é":1}'));
    expect(head(text)).toStrictEqual({
      status: 201,
      headers: expect.objectContaining({
        'content-type': 'application/json',
        'content-length': '8',
      }) as Record<string, string>,
    });
    expect(head(text).headers['connection']).toBe('keep-alive');
    connection.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await connection.until((received) => received.split('HTTP/1.1 201').length === 3);
    expect(connection.closed).toBe(false);
  });

  it('close their connection once the server is closing', async () => {
    const port = await serve(() => Promise.resolve(json('{}')), { isClosing: () => true });
    const connection = await rawConnection(port);
    connection.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const text = await connection.until(() => false);
    expect(head(text).headers['connection']).toBe('close');
    expect(connection.closed).toBe(true);
  });

  it('answer a handler that throws with a 500 api_error carrying a request id', async () => {
    const port = await serve(() => Promise.reject(new Error('handler bug')));
    const connection = await rawConnection(port);
    connection.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const text = await connection.until((received) => received.endsWith('}'));
    const { status, headers } = head(text);
    expect(status).toBe(500);
    const body = JSON.parse(bodyOf(text)) as { error: unknown; request_id: string };
    expect(body.error).toStrictEqual({
      type: 'api_error',
      message: 'the proxy failed while handling this request',
    });
    expect(headers['request-id']).toBe(body.request_id);
    expect(body.request_id).toMatch(/^req_/);
  });
});

describe('the body size limit', () => {
  const readingHandler: ProxyHandler = async (request) => {
    try {
      await request.readBody();
      return json('{"read":true}');
    } catch (error) {
      if (!isTransportError(error)) throw error;
      return json(
        JSON.stringify({ code: error.code, status: error.status, message: error.message }),
        error.status,
      );
    }
  };

  it('refuses a declared length over the limit without reading it, and keeps a connection whose rest fits the budget', async () => {
    const port = await serve(readingHandler, { maxRequestBytes: 10 });
    const connection = await rawConnection(port);
    connection.socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 15\r\n\r\n');
    const text = await connection.until((received) => received.endsWith('}'));
    expect(head(text).status).toBe(413);
    expect(JSON.parse(bodyOf(text))).toStrictEqual({
      code: 'MODEL_ETOOBIG',
      status: 413,
      message: "the request body is larger than this proxy's limit of 10 bytes",
    });
    expect(head(text).headers['connection']).toBe('keep-alive');
    // The rest of the body is read and thrown away; the next request on the connection is served.
    connection.socket.write('x'.repeat(15));
    connection.socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}');
    await connection.until((received) => received.includes('{"read":true}'));
    expect(connection.received).toContain('{"read":true}');
    expect(connection.closed).toBe(false);
  });

  it('closes the connection of a body declared over twice the limit', async () => {
    const port = await serve(readingHandler, { maxRequestBytes: 10 });
    const connection = await rawConnection(port);
    connection.socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 21\r\n\r\n');
    const text = await connection.until(() => false);
    expect(head(text).status).toBe(413);
    expect(head(text).headers['connection']).toBe('close');
  });

  it('keeps the connection of a body declared at exactly twice the limit', async () => {
    const port = await serve(readingHandler, { maxRequestBytes: 10 });
    const connection = await rawConnection(port);
    connection.socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 20\r\n\r\n');
    const text = await connection.until((received) => received.endsWith('}'));
    expect(head(text).headers['connection']).toBe('keep-alive');
  });

  it('accepts a body of exactly the limit, declared or chunked', async () => {
    const port = await serve(readingHandler, { maxRequestBytes: 10 });
    const declared = await rawConnection(port);
    declared.socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\n0123456789');
    expect(bodyOf(await declared.until((received) => received.endsWith('}')))).toBe('{"read":true}');
    const chunked = await rawConnection(port);
    chunked.socket.write(
      'POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n0\r\n\r\n',
    );
    expect(bodyOf(await chunked.until((received) => received.endsWith('}')))).toBe('{"read":true}');
  });

  it('stops reading a chunked body one byte over the limit, and closes a connection whose rest passes the budget', async () => {
    const port = await serve(readingHandler, { maxRequestBytes: 10 });
    const connection = await rawConnection(port);
    connection.socket.write(
      'POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nb\r\n0123456789a\r\n',
    );
    const text = await connection.until((received) => received.endsWith('}'));
    expect(head(text).status).toBe(413);
    expect(head(text).headers['connection']).toBe('keep-alive');
    // 11 bytes read; the budget of 20 leaves 9 more to throw away: 10 more close the connection.
    connection.socket.write('a\r\n0123456789\r\n');
    expect(await connection.closedWithin(5_000)).toBe(true);
  });

  it('keeps a connection whose rest fills the budget exactly, and serves the next request on it', async () => {
    const port = await serve(readingHandler, { maxRequestBytes: 10 });
    const connection = await rawConnection(port);
    connection.socket.write(
      'POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nb\r\n0123456789a\r\n',
    );
    await connection.until((received) => received.endsWith('}'));
    // 11 bytes read and 9 thrown away: 20, the whole budget.
    connection.socket.write('9\r\n012345678\r\n0\r\n\r\n');
    connection.socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}');
    const text = await connection.until((received) => received.includes('{"read":true}'));
    expect(text).toContain('{"read":true}');
    expect(connection.closed).toBe(false);
  });

  it('throws away a large rest of a chunked body refused while it was read, and serves the next request', async () => {
    const limit = 40_000;
    const port = await serve(readingHandler, { maxRequestBytes: limit, bodyIdleTimeoutMs: 200 });
    const connection = await rawConnection(port);
    const over = limit + 1;
    connection.socket.write(
      `POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n${over.toString(16)}\r\n${'a'.repeat(over)}\r\n`,
    );
    const text = await connection.until((received) => received.endsWith('}'));
    expect(head(text).status).toBe(413);
    // The rest comes in pieces, more than a stream buffer of it after the first, all within the budget:
    // every piece is read and dropped, none holds up the connection.
    connection.socket.write('a\r\n0123456789\r\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const rest = 30_000;
    connection.socket.write(`${rest.toString(16)}\r\n${'b'.repeat(rest)}\r\n0\r\n\r\n`);
    // Longer than the idle timeout: a rest left unread would have the connection cut by now.
    await new Promise((resolve) => setTimeout(resolve, 400));
    connection.socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}');
    const after = await connection.until((received) => received.includes('{"read":true}'));
    expect(after).toContain('{"read":true}');
    expect(connection.closed).toBe(false);
  });

  it('cuts a connection whose rest stops arriving for the body idle timeout', async () => {
    const port = await serve(readingHandler, { maxRequestBytes: 10, bodyIdleTimeoutMs: 100 });
    const connection = await rawConnection(port);
    connection.socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 15\r\n\r\n');
    const text = await connection.until((received) => received.endsWith('}'));
    expect([head(text).status, head(text).headers['connection']]).toStrictEqual([413, 'keep-alive']);
    connection.socket.write('01234');
    expect(await connection.closedWithin(5_000)).toBe(true);
  });

  it('after throwing the rest away, keeps the connection past the idle timeout for the next request', async () => {
    const port = await serve(readingHandler, { maxRequestBytes: 10, bodyIdleTimeoutMs: 100 });
    const connection = await rawConnection(port);
    connection.socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 15\r\n\r\n');
    await connection.until((received) => received.endsWith('}'));
    connection.socket.write('x'.repeat(15));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(connection.closed).toBe(false);
    connection.socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}');
    const text = await connection.until((received) => received.includes('{"read":true}'));
    expect(text).toContain('{"read":true}');
    expect(connection.closed).toBe(false);
  });
});

describe('keeping a connection', () => {
  it('keeps one whose body was read in full, however long the answer and the next request take', async () => {
    const port = await serve(
      async (request) => {
        await request.readBody();
        await new Promise((resolve) => setTimeout(resolve, 250));
        return json('{"read":true}');
      },
      { bodyIdleTimeoutMs: 50 },
    );
    const connection = await rawConnection(port);
    connection.socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}');
    const first = await connection.until((received) => received.endsWith('}'));
    expect(head(first).headers['connection']).toBe('keep-alive');
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(connection.closed).toBe(false);
    connection.socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}');
    const both = await connection.until((received) => received.split('{"read":true}').length === 3);
    expect(both.split('{"read":true}')).toHaveLength(3);
    expect(connection.closed).toBe(false);
  });

  it('closes one answered while its body was still being read', async () => {
    const port = await serve((request) => {
      request.readBody().catch(() => undefined);
      return Promise.resolve(json('{"early":true}'));
    });
    const connection = await rawConnection(port);
    connection.socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\n012');
    const text = await connection.until((received) => received.endsWith('}'));
    expect([head(text).status, head(text).headers['connection'], bodyOf(text)]).toStrictEqual([
      200,
      'close',
      '{"early":true}',
    ]);
    expect(await connection.closedWithin(5_000)).toBe(true);
  });
});

describe('a body that stops arriving', () => {
  it('is answered 408 after the idle timeout, and its connection closed', async () => {
    let error: unknown;
    const port = await serve(
      async (request) => {
        try {
          await request.readBody();
          return json('{}');
        } catch (thrown) {
          error = thrown;
          throw thrown;
        }
      },
      { bodyIdleTimeoutMs: 100 },
    );
    const connection = await rawConnection(port);
    connection.socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\n01234');
    const text = await connection.until(() => false);
    expect(head(text).status).toBe(408);
    expect(head(text).headers['connection']).toBe('close');
    expect(
      isTransportError(error) && [error.code, error.status, error.retryable, error.message],
    ).toStrictEqual([
      'MODEL_ETIMEOUT',
      408,
      false,
      'the request body stopped arriving: nothing came for 100 ms (the body idle timeout); send the whole body without pausing',
    ]);
  });

  it('is read to its end when no idle timeout is set', async () => {
    const port = await serve(
      async (request) => {
        await request.readBody();
        return json('{"read":true}');
      },
      { bodyIdleTimeoutMs: 0 },
    );
    const connection = await rawConnection(port);
    connection.socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4\r\n\r\n01');
    await new Promise((resolve) => setTimeout(resolve, 150));
    connection.socket.write('23');
    expect(bodyOf(await connection.until((received) => received.endsWith('}')))).toBe('{"read":true}');
  });
});

describe('a client that goes away', () => {
  it('aborts the exchange, fails the body read, and ends the exchange once', async () => {
    const started: Cancellation[] = [];
    const ended: Cancellation[] = [];
    let readError: unknown;
    let signalAborted = false;
    let handled: () => void = () => undefined;
    const handlerDone = new Promise<void>((resolve) => (handled = resolve));
    const port = await serve(
      async (request) => {
        try {
          await request.readBody();
        } catch (error) {
          readError = error;
        }
        signalAborted = request.signal.aborted;
        handled();
        return json('{}');
      },
      {
        onExchangeStart: (cancellation) => started.push(cancellation),
        onExchangeEnd: (cancellation) => ended.push(cancellation),
      },
    );
    const connection = await rawConnection(port);
    connection.socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\n012');
    await new Promise((resolve) => setTimeout(resolve, 20));
    connection.socket.destroy();
    await handlerDone;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(isTransportError(readError) && [readError.code, readError.message]).toStrictEqual([
      'MODEL_EABORTED',
      'the client closed the connection before sending the whole body',
    ]);
    expect(started).toHaveLength(1);
    expect(ended).toStrictEqual(started);
    const reason = started[0]!.reason;
    expect(isTransportError(reason) && [reason.code, reason.message]).toStrictEqual([
      'MODEL_EABORTED',
      'the client closed the connection',
    ]);
    expect(signalAborted).toBe(true);
  });

  it('does not abort an exchange whose answer was delivered', async () => {
    const started: Cancellation[] = [];
    const ended: Cancellation[] = [];
    const port = await serve(() => Promise.resolve(json('{}')), {
      onExchangeStart: (cancellation) => started.push(cancellation),
      onExchangeEnd: (cancellation) => ended.push(cancellation),
    });
    const connection = await rawConnection(port);
    connection.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    await connection.until(() => false);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ended).toHaveLength(1);
    expect(started[0]!.aborted).toBe(false);
  });
});

describe('SSE answers', () => {
  it('write each string of frames as it comes and end the response', async () => {
    const port = await serve(() =>
      Promise.resolve({
        kind: 'sse',
        status: 200,
        headers: { 'content-type': 'text/event-stream' },
        frames: (async function* () {
          yield 'event: a\ndata: 1\n\n';
          yield 'event: b\ndata: 2\n\n';
        })(),
      }),
    );
    const connection = await rawConnection(port);
    connection.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const text = await connection.until((received) => received.endsWith('0\r\n\r\n'));
    expect(head(text).status).toBe(200);
    expect(head(text).headers['transfer-encoding']).toBe('chunked');
    expect(bodyOf(text)).toContain('event: a\ndata: 1\n\n');
    expect(bodyOf(text)).toContain('event: b\ndata: 2\n\n');
  });

  it('ping while the frames are silent, and stop pinging when they end', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const port = await serve(
      () =>
        Promise.resolve({
          kind: 'sse',
          status: 200,
          headers: {},
          frames: (async function* () {
            yield 'event: a\ndata: 1\n\n';
            await gate;
            yield 'event: b\ndata: 2\n\n';
          })(),
        }),
      { pingIntervalMs: 20 },
    );
    const connection = await rawConnection(port);
    connection.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await connection.until((received) => received.includes('event: ping'));
    release();
    const text = await connection.until((received) => received.endsWith('0\r\n\r\n'));
    const body = bodyOf(text);
    expect(body.indexOf('event: a')).toBeLessThan(body.indexOf('event: ping'));
    expect(body.indexOf('event: ping')).toBeLessThan(body.indexOf('event: b'));
  });

  it('send no pings when no ping interval is set', async () => {
    const port = await serve(() =>
      Promise.resolve({
        kind: 'sse',
        status: 200,
        headers: {},
        frames: (async function* () {
          yield 'event: a\ndata: 1\n\n';
          await new Promise((resolve) => setTimeout(resolve, 100));
          yield 'event: b\ndata: 2\n\n';
        })(),
      }),
    );
    const connection = await rawConnection(port);
    connection.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const text = await connection.until((received) => received.endsWith('0\r\n\r\n'));
    expect(bodyOf(text)).toContain('event: b');
    expect(bodyOf(text)).not.toContain('event: ping');
  });

  it('wait for the client to take each large frame, delivering all of them in order without piling up listeners', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    const frame = (index: number) =>
      `event: big\ndata: ${String(index).padStart(2, '0')}${'x'.repeat(64 * 1024)}\n\n`;
    try {
      const port = await serve(() =>
        Promise.resolve({
          kind: 'sse',
          status: 200,
          headers: {},
          frames: (async function* () {
            for (let index = 0; index < 16; index++) yield frame(index);
          })(),
        }),
      );
      const connection = await rawConnection(port);
      connection.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
      const text = await connection.until((received) => received.endsWith('0\r\n\r\n'));
      const indexes = [...bodyOf(text).matchAll(/data: (\d\d)x/g)].map((match) => Number(match[1]));
      expect(indexes).toStrictEqual([...Array(16).keys()]);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toStrictEqual([]);
  });

  it('end the frames when a client that stopped reading goes away', async () => {
    let finished = false;
    let written = 0;
    const port = await serve(() =>
      Promise.resolve({
        kind: 'sse',
        status: 200,
        headers: {},
        frames: (async function* () {
          try {
            for (; written < 4_000; written++) yield `data: ${'y'.repeat(64 * 1024)}\n\n`;
          } finally {
            finished = true;
          }
        })(),
      }),
    );
    const connection = await rawConnection(port);
    connection.socket.pause();
    connection.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    // Wait until the server is stuck behind full buffers: no frame taken for a while.
    let last = -1;
    while (written !== last) {
      last = written;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    expect(written).toBeLessThan(4_000);
    connection.socket.destroy();
    for (let wait = 0; wait < 300 && !finished; wait++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(finished).toBe(true);
  });

  it('end the frames (and so the upstream exchange) when the client went away', async () => {
    let finished = false;
    let count = 0;
    let gone: () => void = () => undefined;
    const clientGone = new Promise<void>((resolve) => (gone = resolve));
    const port = await serve(() =>
      Promise.resolve({
        kind: 'sse',
        status: 200,
        headers: {},
        frames: (async function* () {
          try {
            yield 'event: a\ndata: 1\n\n';
            await clientGone;
            await new Promise((resolve) => setTimeout(resolve, 30));
            for (;;) {
              count += 1;
              yield 'event: b\ndata: 2\n\n';
              if (count > 10_000) return;
            }
          } finally {
            finished = true;
          }
        })(),
      }),
    );
    const connection = await rawConnection(port);
    connection.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await connection.until((received) => received.includes('event: a'));
    connection.socket.destroy();
    gone();
    for (let wait = 0; wait < 100 && !finished; wait++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(finished).toBe(true);
    expect(count).toBeLessThan(10_000);
  });
});

describe('answers that cannot go out as given', () => {
  it('close the connection without a word when the head cannot be written', async () => {
    const port = await serve(() =>
      Promise.resolve({ kind: 'json', status: 200, headers: { 'x-broken': 'a\nb' }, body: '{}' }),
    );
    const connection = await rawConnection(port);
    connection.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(await connection.closedWithin(5_000)).toBe(true);
    expect(connection.received).toBe('');
  });

  it('name a request without method or target GET /', async () => {
    let seen: InboundRequest | undefined;
    const request = new IncomingMessage(new Socket());
    request.method = undefined;
    request.url = undefined;
    createNodeListener(
      (inbound) => {
        seen = inbound;
        return Promise.resolve(json('{}'));
      },
      { maxRequestBytes: 10 },
    )(request, new ServerResponse(request));
    // The handler is called at once, before the listener's first wait.
    expect([seen?.method, seen?.url]).toStrictEqual(['GET', '/']);
  });
});

describe('responseStartedOn', () => {
  it('is false before an answer started on a socket and true once its head went out', async () => {
    const checks: boolean[] = [];
    let socket: object | undefined;
    const listener = createNodeListener(() => Promise.resolve(json('{}')), { maxRequestBytes: 10 });
    const tracked = createServer((request, response) => {
      socket = request.socket;
      checks.push(responseStartedOn(request.socket));
      listener(request, response);
    });
    servers.push(tracked);
    await new Promise<void>((resolve) => tracked.listen(0, '127.0.0.1', resolve));
    const connection = await rawConnection((tracked.address() as AddressInfo).port);
    connection.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await connection.until((received) => received.endsWith('{}'));
    checks.push(responseStartedOn(socket!));
    expect(checks).toStrictEqual([false, true]);
    expect(responseStartedOn({})).toBe(false);
  });
});
