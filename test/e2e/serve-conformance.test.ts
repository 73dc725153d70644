/**
 * `tpx serve` as an HTTP/1.1 server at the edges of the protocol: an upload over the size limit is
 * answered 413 in a way the official SDK reads (no reset, no re-upload), a request body that stops
 * arriving is cut by the body idle timeout, and what node's parser refuses (a malformed request line,
 * a bad header, headers too large, broken chunked framing) is answered in the Messages error shape.
 */
import Anthropic from '@anthropic-ai/sdk';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startTpxProxy, type TpxProxy } from './serve-support.js';

let proxy: TpxProxy | undefined;

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

/** Everything a raw connection receives until the server closes it (or `timeoutMs` passes). */
function exchangeRaw(
  port: number,
  send: (socket: Socket) => void,
  timeoutMs = 10_000,
): Promise<{ text: string; closedBy: 'server' | 'timeout' | 'error'; error?: string; elapsedMs: number }> {
  return new Promise((resolve) => {
    const startedAt = Date.now();
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closedBy: 'server' | 'timeout' | 'error', error?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({
        text: Buffer.concat(chunks).toString('utf8'),
        closedBy,
        elapsedMs: Date.now() - startedAt,
        ...(error === undefined ? {} : { error }),
      });
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => finish('server'));
    socket.on('close', () => finish('server'));
    socket.on('error', (error: NodeJS.ErrnoException) => finish('error', error.code));
    socket.on('connect', () => send(socket));
  });
}

/** The status and parsed body of the first response in `text`. */
function firstResponse(text: string): { status: number; headers: string; body: unknown } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  const split = text.indexOf('\r\n\r\n');
  const headers = text.slice(0, split);
  const length = Number(/\r\ncontent-length: (\d+)/i.exec(headers)?.[1] ?? -1);
  const bodyText = length >= 0 ? text.slice(split + 4, split + 4 + length) : text.slice(split + 4);
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    body = bodyText;
  }
  return { status, headers, body };
}

const HELLO = { model: 'claude-test', max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] };

/** A request head for `POST /v1/messages` on `port`, with `extra` header lines. */
function postHead(port: number, extra: readonly string[]): string {
  return [
    'POST /v1/messages HTTP/1.1',
    `Host: 127.0.0.1:${port}`,
    'Content-Type: application/json',
    ...extra,
    '',
    '',
  ].join('\r\n');
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes `data` and resolves once the socket took it (rejects on a write error such as a reset). */
function write(socket: Socket, data: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => socket.write(data, (error) => (error ? reject(error) : resolve())));
}

function expectMessagesError(
  response: { status: number; body: unknown },
  status: number,
  type: string,
  message: RegExp,
): void {
  expect(response.status).toBe(status);
  expect(response.body).toMatchObject({
    type: 'error',
    error: { type, message: expect.stringMatching(message) },
  });
}

describe('an upload over the size limit', () => {
  it('is answered 413 request_too_large that the official SDK reads every time, without re-uploading', async () => {
    proxy = await startTpxProxy({ serve: { maxRequestBytes: 1024 * 1024 } });
    let uploads = 0;
    const client = new Anthropic({
      baseURL: proxy.server.url,
      apiKey: 'k',
      // The SDK's own retry policy: a reset connection would be retried, re-uploading the body.
      maxRetries: 2,
      fetch: (input, init) => {
        uploads++;
        return fetch(input, init);
      },
    });
    // Half again over the limit (as 50 MB is over the default 32 MiB), more than socket buffers hold.
    const content = 'x'.repeat(1536 * 1024);
    for (let round = 0; round < 5; round++) {
      const error = await client.messages
        .create({ ...HELLO, messages: [{ role: 'user', content }] })
        .catch((thrown: unknown) => thrown);
      expect(error, `round ${round}: ${String(error)}`).toBeInstanceOf(Anthropic.APIError);
      expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(413);
      expect((error as InstanceType<typeof Anthropic.APIError>).type).toBe('request_too_large');
    }
    expect(uploads).toBe(5);
    expect(proxy.mock.requests).toHaveLength(0);
  });

  it.each([
    ['declared with content-length', false],
    ['chunked, refused part-way', true],
  ])(
    'lets a client that writes its whole body before reading (%s) finish, read the 413, and go on on the same connection',
    async (_label, chunked) => {
      proxy = await startTpxProxy({ serve: { maxRequestBytes: 256 * 1024 } });
      const { port } = proxy.server;
      const piece = Buffer.alloc(32 * 1024, 'x');
      const pieces = 15; // 480 KiB: over the limit, within what the proxy reads to its end
      const result = await exchangeRaw(port, (socket) => {
        void (async () => {
          try {
            await write(
              socket,
              postHead(
                port,
                chunked ? ['Transfer-Encoding: chunked'] : [`Content-Length: ${piece.length * pieces}`],
              ),
            );
            for (let index = 0; index < pieces; index++) {
              await write(
                socket,
                chunked
                  ? Buffer.concat([
                      Buffer.from(`${piece.length.toString(16)}\r\n`),
                      piece,
                      Buffer.from('\r\n'),
                    ])
                  : piece,
              );
              // Slow enough that the answer comes while the client is still writing.
              await pause(5);
            }
            if (chunked) await write(socket, '0\r\n\r\n');
            // The same connection carries the next request.
            const body = JSON.stringify(HELLO);
            await write(
              socket,
              postHead(port, [`Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close']) + body,
            );
          } catch (error) {
            socket.emit('error', error);
          }
        })();
      });
      expect(result.error, 'the client saw a reset or a write error').toBeUndefined();
      const first = firstResponse(result.text);
      expectMessagesError(first, 413, 'request_too_large', /larger than this proxy's limit of 262144 bytes/);
      const second = firstResponse(result.text.slice(result.text.indexOf('HTTP/1.1', 12)));
      expect(second.status).toBe(200);
      expect(second.body).toMatchObject({ type: 'message' });
      expect(proxy.mock.requests).toHaveLength(1);
    },
  );
});

describe('a request that stops arriving', () => {
  it('is answered 408 timeout_error and closed once its body is silent for the idle timeout', async () => {
    proxy = await startTpxProxy({ serve: { bodyIdleTimeoutMs: 300 } });
    const { port } = proxy.server;
    const body = JSON.stringify(HELLO);
    const result = await exchangeRaw(port, (socket) => {
      // Headers and half the body, then silence with the connection open.
      socket.write(postHead(port, [`Content-Length: ${Buffer.byteLength(body)}`]) + body.slice(0, 20));
    });
    expect(result.closedBy).toBe('server');
    expectMessagesError(firstResponse(result.text), 408, 'timeout_error', /stopped arriving.*300 ms/);
    expect(proxy.mock.requests).toHaveLength(0);
  });

  it('keeps a body that arrives slowly but never goes silent for that long', async () => {
    proxy = await startTpxProxy({ serve: { bodyIdleTimeoutMs: 300 } });
    const { port } = proxy.server;
    const body = JSON.stringify({ ...HELLO, connection: undefined });
    const result = await exchangeRaw(port, (socket) => {
      void (async () => {
        await write(
          socket,
          postHead(port, [`Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close']),
        );
        // Longer in all than the timeout, never silent for as long.
        for (let offset = 0; offset < body.length; offset += 10) {
          await write(socket, body.slice(offset, offset + 10));
          await pause(50);
        }
      })();
    });
    expect(firstResponse(result.text).status).toBe(200);
  });

  it('is answered 408 in the Messages shape when its headers stop arriving', async () => {
    proxy = await startTpxProxy({ serve: { bodyIdleTimeoutMs: 300 } });
    const { port } = proxy.server;
    const result = await exchangeRaw(port, (socket) => {
      socket.write(`POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Ty`);
    });
    expect(result.closedBy).toBe('server');
    expectMessagesError(firstResponse(result.text), 408, 'timeout_error', /headers did not arrive/);
  });
});

describe('requests node cannot parse', () => {
  it.each([
    [
      'a malformed request line',
      (port: number) => `POST /v1/messages HTTP/1.1 extra\r\nHost: 127.0.0.1:${port}\r\n\r\n`,
      400,
    ],
    [
      'an unknown method token',
      (port: number) => `P@ST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`,
      400,
    ],
    [
      'a header name with a space',
      (port: number) => `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nBad Header: x\r\n\r\n`,
      400,
    ],
    [
      'a control character in a header value',
      (port: number) => `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Note: a\u0001b\r\n\r\n`,
      400,
    ],
    [
      'both content-length and chunked',
      (port: number) =>
        `${postHead(port, ['Content-Length: 4', 'Transfer-Encoding: chunked'])}4\r\n{}{}\r\n0\r\n\r\n`,
      400,
    ],
    [
      'a chunk size that is not hexadecimal',
      (port: number) => `${postHead(port, ['Transfer-Encoding: chunked'])}zz\r\n{}\r\n0\r\n\r\n`,
      400,
    ],
    ['headers over 16 KiB', (port: number) => postHead(port, [`X-Big: ${'a'.repeat(20 * 1024)}`]), 431],
  ])('answers %s in the Messages error shape and closes', async (_label, request, status) => {
    proxy = await startTpxProxy();
    const { port } = proxy.server;
    const result = await exchangeRaw(port, (socket) => socket.write(request(port)));
    expect(result.closedBy).toBe('server');
    expect(result.text.match(/(^|\r\n)HTTP\/1\.1 \d{3} /g), 'one answer only').toHaveLength(1);
    const response = firstResponse(result.text);
    expectMessagesError(response, status, 'invalid_request_error', /./);
    expect(response.headers).toMatch(/\r\nrequest-id: req_/);
    expect(proxy.mock.requests).toHaveLength(0);
  });
});
