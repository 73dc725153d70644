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
  /**
   * Longest wait for the next piece of a request body, in ms; a body that stops arriving for longer is
   * answered 408 and its connection closed. 0: no limit. @default 0
   */
  bodyIdleTimeoutMs?: number;
}

type BodyState = 'unread' | 'reading' | 'complete' | 'refused' | 'stalled';

function tooLarge(maxBytes: number): TransportError {
  return proxyError(413, `the request body is larger than this proxy's limit of ${maxBytes} bytes`);
}

function stalled(idleMs: number): TransportError {
  return proxyError(
    408,
    `the request body stopped arriving: nothing came for ${idleMs} ms (the body idle timeout); send the whole body without pausing`,
  );
}

/**
 * Reads a request body once, within `maxBytes` and with at most `idleMs` between two pieces;
 * remembers whether the body was consumed in full and how many bytes were read.
 */
function createBodyReader(request: IncomingMessage, maxBytes: number, idleMs: number) {
  let state: BodyState = 'unread';
  let size = 0;
  return {
    get state(): BodyState {
      return state;
    },
    /** Body bytes read so far. */
    get bytesRead(): number {
      return size;
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
        // node's own request timeout (minutes) is for the whole request; a body that stalls is cut
        // after the same silence the transport allows an upstream answer.
        const timer =
          idleMs > 0
            ? setTimeout(() => {
                stop();
                state = 'stalled';
                request.pause();
                reject(stalled(idleMs));
              }, idleMs)
            : undefined;
        const stop = () => {
          clearTimeout(timer);
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
            // Stop keeping bytes: what follows is thrown away while the 413 is written (see `discardRest`).
            request.pause();
            reject(tooLarge(maxBytes));
            return;
          }
          timer?.refresh();
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

/**
 * Reads and throws away the rest of a request body the answer did not need (one over the size limit,
 * or one the handler refused unread), so that the connection is not closed under a client still
 * sending: closing a socket with unread bytes makes the kernel answer with a reset, and a client that
 * writes its whole body before it reads (many do) then sees the reset instead of the answer, and
 * retries the upload. At most `budgetBytes` are thrown away and at most `idleMs` waited for each
 * piece; past either, the connection is closed.
 */
function discardRest(request: IncomingMessage, budgetBytes: number, idleMs: number): void {
  let left = budgetBytes;
  const cut = () => {
    stop();
    request.socket.destroy();
  };
  const timer = idleMs > 0 ? setTimeout(cut, idleMs) : undefined;
  const onData = (chunk: Buffer) => {
    left -= chunk.length;
    if (left < 0) cut();
    else timer?.refresh();
  };
  const stop = () => {
    clearTimeout(timer);
    request.off('data', onData);
    request.off('end', stop);
    request.off('close', stop);
  };
  request.on('data', onData);
  request.once('end', stop);
  request.once('close', stop);
  request.resume();
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

/** How many body bytes in all a connection may carry past a refusal before it is closed instead. */
function discardBudget(maxRequestBytes: number): number {
  // As many again as the limit: an upload somewhat over the limit (50 MB against 32 MiB) is read to
  // its end and its client reads the 413; a far larger one is not worth the bandwidth.
  return 2 * maxRequestBytes;
}

/**
 * Whether the connection can stay open after the answer: the body was read in full, or what is left
 * of it can be thrown away within the budget (then that starts now). A body that stalled or was left
 * half-read by a client that went away leaves the connection in an unknown state.
 */
function keepsConnection(
  request: IncomingMessage,
  body: ReturnType<typeof createBodyReader>,
  options: NodeListenerOptions,
): boolean {
  if (body.state === 'stalled' || body.state === 'reading') return false;
  if (request.complete) return true;
  const budget = discardBudget(options.maxRequestBytes);
  const declared = Number(request.headers['content-length']);
  if (declared > budget) return false;
  discardRest(request, budget - body.bytesRead, options.bodyIdleTimeoutMs ?? 0);
  return true;
}

/** The response in progress on each connection, for {@link responseStartedOn}. */
const responses = new WeakMap<object, ServerResponse>();

/**
 * Whether a response already sent its head on `socket`: an error answer written on the socket now
 * would be read as part of that response.
 */
export function responseStartedOn(socket: object): boolean {
  return responses.get(socket)?.headersSent === true;
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
    responses.set(request.socket, response);
    options.onExchangeStart?.(cancellation);
    response.once('close', () => {
      if (!response.writableFinished) {
        cancellation.abort(new TransportError('MODEL_EABORTED', 'the client closed the connection'));
      }
      options.onExchangeEnd?.(cancellation);
    });
    const bodyIdleTimeoutMs = options.bodyIdleTimeoutMs ?? 0;
    const body = createBodyReader(request, options.maxRequestBytes, bodyIdleTimeoutMs);
    const inbound: InboundRequest = {
      method: request.method ?? 'GET',
      url: request.url ?? '/',
      httpVersion: request.httpVersion,
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
    const closeConnection = !keepsConnection(request, body, options) || options.isClosing?.() === true;
    try {
      await writeResponse(response, answer, closeConnection, options.pingIntervalMs ?? 0);
    } catch {
      // Writing failed (the socket broke under us): nothing is left to tell this client.
      response.destroy();
    }
  }
}
