/**
 * Interim `100 Continue` heads before the real answer, byte by byte: a raw TCP server on 127.0.0.1 writes
 * each answer in the pieces a test names, pausing between them so that they arrive as separate reads,
 * and the HTTP exchange must take the final answer whatever the split. The outcome never depends on how
 * the pieces arrive; the pieces only make the splits likely.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { httpRequest, readBody } from '../../src/providers/http-exchange.js';
import { rejectionOf, testAttempt, type TestAttempt } from './attempt-context.js';

let server: Server | undefined;
let attempt: TestAttempt | undefined;
const sockets = new Set<Socket>();

afterEach(async () => {
  await attempt?.close();
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
  attempt = undefined;
  server = undefined;
});

const pause = () => new Promise((resolve) => setTimeout(resolve, 15));

/**
 * A server that answers each request, once its head has arrived, with the next answer's pieces, written
 * one by one; `end` closes the connection after the last piece.
 */
async function answering(...answers: { pieces: (string | Buffer)[]; end?: boolean }[]): Promise<string> {
  let next = 0;
  server = createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (!received.includes('\r\n\r\n')) return;
      received = '';
      const answer = answers[next++];
      if (answer === undefined) return;
      void (async () => {
        for (const piece of answer.pieces) {
          socket.write(piece);
          await pause();
        }
        if (answer.end === true) socket.end();
      })();
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function get(url: string): Promise<{ status: number; body: string }> {
  attempt ??= testAttempt('tpx', { deadlines: { firstByteTimeoutMs: 5_000 } });
  const response = await httpRequest(`${url}/v1/models`, { method: 'GET', headers: {} }, attempt.context);
  return { status: response.status, body: await readBody(response, attempt.context) };
}

const OK = 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok';

describe('interim responses before the answer', () => {
  it('drops a 100 Continue that arrives a few bytes at a time', async () => {
    const url = await answering({ pieces: ['HT', 'TP/1.1 1', '00 Continue\r\n', '\r', '\n', OK] });
    expect(await get(url)).toStrictEqual({ status: 200, body: 'ok' });
  });

  it('drops several 100s in one read, and passes another 1xx on for the client to skip', async () => {
    const url = await answering({
      pieces: [
        'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 100 Continue\r\nx-note: 1\r\n\r\n' +
          OK,
      ],
    });
    expect(await get(url)).toStrictEqual({ status: 200, body: 'ok' });
  });

  it('ends an interim head at its first blank line, bare line feeds or CRLF, whichever comes first', async () => {
    const url = await answering(
      { pieces: ['HTTP/1.1 100 Continue\n\n' + OK] },
      { pieces: ['HTTP/1.1 100 Continue\r\nx-note: 1\n\n' + OK] },
      { pieces: ['HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\na\n\nb'] },
    );
    expect(await get(url)).toStrictEqual({ status: 200, body: 'ok' });
    expect(await get(url)).toStrictEqual({ status: 200, body: 'ok' });
    expect(await get(url)).toStrictEqual({ status: 200, body: 'a\n\nb' });
  });

  it('takes a final status line that arrives in pieces shorter than a status line, or says HTTP/1.0', async () => {
    const url = await answering(
      { pieces: ['H', 'TTP/1.1 2', '00 OK\r\ncontent-length: 2\r\n\r\nok'] },
      { pieces: ['HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok'], end: true },
    );
    expect(await get(url)).toStrictEqual({ status: 200, body: 'ok' });
    expect(await get(url)).toStrictEqual({ status: 200, body: 'ok' });
  });

  it('leaves a body that looks like a 100 head alone, request after request on one connection', async () => {
    const tricky = 'HTTP/1.1 100 Continue\r\n\r\n';
    const answer = `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: ${tricky.length}\r\n\r\n`;
    const url = await answering(
      { pieces: [answer, tricky] },
      { pieces: [answer, tricky] },
      { pieces: [answer, tricky] },
    );
    for (let round = 0; round < 3; round++)
      expect(await get(url)).toStrictEqual({ status: 200, body: tricky });
    // Fewer connections than answers: at least one connection carried two of them.
    expect(sockets.size).toBeLessThan(3);
  });

  it('passes on an interim head that never ends, for the client to refuse as too large', async () => {
    const url = await answering({
      pieces: [
        'HTTP/1.1 100 Continue\r\nx-pad: ',
        'a'.repeat(8 * 1024),
        'b'.repeat(9 * 1024),
        'c'.repeat(1024),
      ],
    });
    const error = await rejectionOf(get(url));
    expect(error).toMatchObject({ code: 'MODEL_ETRANSPORT', provider: 'tpx' });
    expect((error as Error).message).toMatch(
      /^network failure talking to the tpx endpoint: .*\(UND_ERR_HEADERS_OVERFLOW\)$/,
    );
  });

  it('passes on an answer that is not HTTP at all, for the client to refuse', async () => {
    const url = await answering({ pieces: ['SSH-2.0-OpenSSH_9.6\r\n\r\n'], end: true });
    const error = await rejectionOf(get(url));
    expect(error).toMatchObject({ code: 'MODEL_ETRANSPORT', provider: 'tpx' });
  });

  it('passes on the start of a head that the connection cut short', async () => {
    const url = await answering({ pieces: ['HTTP/1.1 100 Cont'], end: true });
    const error = await rejectionOf(get(url));
    expect(error).toMatchObject({ code: 'MODEL_ETRANSPORT', provider: 'tpx' });
  });
});
