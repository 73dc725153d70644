/**
 * The thin `node:http` adapter: turns an `IncomingMessage` into an {@link InboundRequest} (body read on
 * demand within the size limit, a signal that aborts when the client goes away) and writes the
 * handler's {@link ProxyResponse} back — one JSON body, or SSE frames written and flushed as they come
 * (the frames of one upstream chunk in one write), with backpressure honoured.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { TransportError } from '../errors.js';
import { Cancellation } from '../providers/cancellation.js';
import { errorResponse, proxyError } from './error-response.js';
import { generateRequestId } from './exchange.js';
import { startPinger } from './keep-alive.js';
import type { InboundRequest, ProxyHandler, ProxyResponse } from './types.js';

/** Options of {@link createNodeListener}. */
export interface NodeListenerOptions {
  /** Largest request body accepted, in bytes. */
  maxRequestBytes: number;
  /** Told when an exchange starts and when its connection is done with it (graceful shutdown). */
  onExchangeStart?: (cancellation: Cancellation) => void;
  onExchangeEnd?: (cancellation: Cancellation) => void;
  /** True once the server is shutting down: answers from then on close their connection. */
  isClosing?: () => boolean;
  /** Ping a stream after this many ms with nothing written (see `keep-alive.ts`); 0: never. @default 0 */
  pingIntervalMs?: number;
}

type BodyState = 'unread' | 'reading' | 'complete' | 'refused';

function tooLarge(maxBytes: number): TransportError {
  return proxyError(413, `the request body is larger than this proxy's limit of ${maxBytes} bytes`);
}

/** Reads a request body once, within `maxBytes`; remembers whether the body was consumed in full. */
function createBodyReader(request: IncomingMessage, maxBytes: number) {
  let state: BodyState = 'unread';
  return {
    get state(): BodyState {
      return state;
    },
    read(): Promise<Uint8Array> {
      if (state !== 'unread') return Promise.reject(new Error('the request body can be read only once'));
      const declared = Number(request.headers['content-length']);
      // Refused on the declared length alone: the body is never read.
      if (declared > maxBytes) {
        state = 'refused';
        return Promise.reject(tooLarge(maxBytes));
      }
      state = 'reading';
      return new Promise<Uint8Array>((resolve, reject) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const stop = () => {
          request.off('data', onData);
          request.off('end', onEnd);
          request.off('error', onGone);
          request.off('close', onGone);
        };
        const onData = (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            stop();
            state = 'refused';
            // Stop taking bytes in: the connection is closed once the 413 is written.
            request.pause();
            reject(tooLarge(maxBytes));
            return;
          }
          chunks.push(chunk);
        };
        const onEnd = () => {
          stop();
          state = 'complete';
          resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
        };
        const onGone = () => {
          stop();
          reject(
            new TransportError(
              'MODEL_EABORTED',
              'the client closed the connection before sending the whole body',
            ),
          );
        };
        request.on('data', onData);
        request.on('end', onEnd);
        request.on('error', onGone);
        request.on('close', onGone);
      });
    },
  };
}

/** Resolves when the response can take more data, or is gone. */
function drained(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}

async function writeResponse(
  response: ServerResponse,
  answer: ProxyResponse,
  closeConnection: boolean,
  pingIntervalMs: number,
): Promise<void> {
  const headers: Record<string, string> = { ...answer.headers };
  if (closeConnection) headers['connection'] = 'close';
  if (answer.kind === 'json') {
    if (response.destroyed) return; // the client left while the answer was being prepared
    headers['content-length'] = String(Buffer.byteLength(answer.body));
    response.writeHead(answer.status, headers);
    response.end(answer.body);
    return;
  }
  // Even for a client that already left, the loop below starts the frames once and stops them, so that
  // the upstream exchange is ended and logged.
  response.writeHead(answer.status, headers);
  const pinger = pingIntervalMs > 0 ? startPinger(response, pingIntervalMs) : undefined;
  try {
    await writeFrames(response, answer.frames, pinger);
  } finally {
    pinger?.stop();
  }
  if (!response.destroyed) response.end();
}

async function writeFrames(
  response: ServerResponse,
  frames: AsyncIterable<string>,
  pinger: { wrote(): void } | undefined,
): Promise<void> {
  // Each string (the frames of one upstream chunk) is written as soon as it exists: node sends it at once
  // (no Nagle delay, see startServer's `noDelay`), so what the upstream sent together goes out together.
  for await (const text of frames) {
    // Leaving the loop calls the frames' `return()`, which ends the upstream exchange.
    if (response.destroyed) break;
    pinger?.wrote();
    if (!response.write(text)) await drained(response);
  }
}

/** Creates the `request` listener for a `node:http` server. */
export function createNodeListener(
  handler: ProxyHandler,
  options: NodeListenerOptions,
): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    void serve(request, response);
  };

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const cancellation = new Cancellation();
    options.onExchangeStart?.(cancellation);
    response.once('close', () => {
      if (!response.writableFinished) {
        cancellation.abort(new TransportError('MODEL_EABORTED', 'the client closed the connection'));
      }
      options.onExchangeEnd?.(cancellation);
    });
    const body = createBodyReader(request, options.maxRequestBytes);
    const inbound: InboundRequest = {
      method: request.method ?? 'GET',
      url: request.url ?? '/',
      headers: request.headers,
      rawHeaders: request.rawHeaders,
      readBody: () => body.read(),
      // A signal is made only if something asks for one; the transport follows the cancellation.
      get signal() {
        return cancellation.signal;
      },
      cancellation,
    };
    let answer: ProxyResponse;
    try {
      answer = await handler(inbound);
    } catch (error) {
      // The handler answers every failure itself; this is the guard against a bug in it.
      answer = errorResponse(error, generateRequestId());
    }
    // A body that was refused or left half-read leaves the connection in an unknown state: close it.
    const closeConnection =
      body.state === 'refused' || body.state === 'reading' || options.isClosing?.() === true;
    try {
      await writeResponse(response, answer, closeConnection, options.pingIntervalMs ?? 0);
    } catch {
      // Writing failed (the socket broke under us): nothing is left to tell this client.
      response.destroy();
    }
  }
}
