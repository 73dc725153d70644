/**
 * What the proxy answers when node's HTTP parser refuses a request before any handler sees it (the
 * server's `clientError` event): a malformed request line, a header node cannot parse, headers past
 * node's size limit, broken chunked framing, headers that took too long to arrive. node itself would
 * answer with a bare `400 Bad Request` and no body; a Messages client gets its error shape instead,
 * with a message naming what was wrong, and the connection is closed (the parser cannot go on).
 *
 * @module
 */
import type { Duplex } from 'node:stream';
import { errorTypeForStatus } from '../errors.js';
import { generateRequestId } from './exchange.js';

/** How long a refused connection may stay open for the answer to be read, in ms. */
const CLOSE_GRACE_MS = 1_000;

const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Content Too Large',
  431: 'Request Header Fields Too Large',
};

/** The status and wording for one parser error code (node's `HPE_*` codes, from llhttp). */
function describe(error: NodeJS.ErrnoException & { reason?: unknown }): { status: number; message: string } {
  const detail =
    typeof error.reason === 'string' && error.reason !== '' ? error.reason : (error.message ?? 'parse error');
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        message: 'the request headers are larger than this proxy accepts (node --max-http-header-size)',
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, message: 'the chunk extensions of the request body are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        message: 'the request headers did not arrive in time; send the request line and headers at once',
      };
    case undefined:
    default:
      return {
        status: 400,
        message: `the request is not valid HTTP/1.1 and could not be read: ${detail}${error.code === undefined ? '' : ` (${error.code})`}`,
      };
  }
}

/**
 * Answers a request node's parser refused, in the Messages error shape, when the socket can still
 * carry an answer and no response has started on it; then closes the connection.
 *
 * @param responseStarted whether a response already sent bytes on this socket (an answer now would be
 *   read as part of it)
 */
export function answerClientError(
  error: NodeJS.ErrnoException & { reason?: unknown },
  socket: Duplex,
  responseStarted: boolean,
): void {
  // A reset or a client that already went away has nobody left to read an answer.
  if (error.code === 'ECONNRESET' || !socket.writable || responseStarted) {
    socket.destroy();
    return;
  }
  const { status, message } = describe(error);
  const requestId = generateRequestId();
  const body = JSON.stringify({
    type: 'error',
    error: { type: errorTypeForStatus(status), message },
    request_id: requestId,
  });
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Bad Request'}\r\n` +
      'content-type: application/json\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `request-id: ${requestId}\r\n` +
      'x-should-retry: false\r\n' +
      'connection: close\r\n' +
      '\r\n' +
      body,
  );
  // The parser is gone: what the client still sends is not read, and the socket must not stay open on it.
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
}
