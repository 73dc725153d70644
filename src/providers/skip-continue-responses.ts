/**
 * Lets undici accept an interim `100 Continue` before the real answer. A client must parse any number
 * of 1xx responses before the final one, even unasked for (RFC 9110 §15.2), and some servers and
 * proxies in front of model APIs send `100 Continue` to every POST. undici's HTTP/1.1 parser
 * destroys the connection on a 100 instead (`SocketError: bad response`; nodejs/undici#197, declined
 * upstream), and it has no option or hook before its parser that could skip one: an interceptor only
 * sees the response after the parser did. So the bytes are filtered where they enter the socket.
 *
 * The filter watches what undici writes: a write that starts with a request line is the start of a
 * request, and the connection carries one request at a time (the pool's `pipelining: 1`), so the
 * first bytes read after it start that request's response. From there, each `100` response head
 * (status line, fields, empty line) is dropped; any other 1xx is passed on (undici skips those
 * itself); the first final status line ends the watch and everything from it on is passed through
 * untouched, so a response body is never looked at. A head that does not parse is passed on for
 * undici to refuse.
 *
 * @module
 */
import type { Socket } from 'node:net';

/** `METHOD target HTTP/1.1` and its CRLF at the start of a write: undici writes each request head whole. */
const REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ [^ \r\n]+ HTTP\/1\.1\r\n/;
/** A status line's start: `HTTP/1.1 100 `. */
const STATUS_LINE = /^HTTP\/1\.[01] (\d{3})[ \r\n]/;
/** The longest status-line prefix {@link STATUS_LINE} needs to decide. */
const STATUS_PREFIX_LENGTH = 'HTTP/1.1 100 '.length;
/** Past this, an unterminated interim head is passed on as it is, for undici's size limit to refuse. */
const MAX_INTERIM_HEAD_BYTES = 16 * 1024;

type Look =
  | { kind: 'undecided' }
  | { kind: 'final' }
  /** An interim head of `length` bytes; `skip` when it is a 100 to drop. */
  | { kind: 'interim'; length: number; skip: boolean };

/** Classifies the response head at the start of `bytes`. */
function look(bytes: Buffer): Look {
  if (bytes.length < STATUS_PREFIX_LENGTH) {
    return couldStartStatusLine(bytes) ? { kind: 'undecided' } : { kind: 'final' };
  }
  const match = STATUS_LINE.exec(bytes.subarray(0, STATUS_PREFIX_LENGTH).toString('latin1'));
  if (match === null) return { kind: 'final' };
  const status = Number(match[1]);
  // 101 switches protocols: what follows is no longer HTTP/1.1.
  if (status < 100 || status > 199 || status === 101) return { kind: 'final' };
  const end = headEnd(bytes);
  if (end === -1) {
    return bytes.length > MAX_INTERIM_HEAD_BYTES ? { kind: 'final' } : { kind: 'undecided' };
  }
  return { kind: 'interim', length: end, skip: status === 100 };
}

/** Whether `bytes` (shorter than a status-line prefix) could still be the start of one. */
function couldStartStatusLine(bytes: Buffer): boolean {
  const template = 'HTTP/1.# ### ';
  for (let index = 0; index < bytes.length; index++) {
    const expected = template[index]!;
    const actual = String.fromCharCode(bytes[index]!);
    if (expected === '#' ? actual < '0' || actual > '9' : actual !== expected) return false;
  }
  return true;
}

/** The length of the head at the start of `bytes` up to and including its empty line; -1 if incomplete. */
function headEnd(bytes: Buffer): number {
  // A recipient may take a bare LF as a line end (RFC 9112 §2.2), as undici's parser does.
  const crlf = bytes.indexOf('\r\n\r\n');
  const lf = bytes.indexOf('\n\n');
  if (crlf === -1) return lf === -1 ? -1 : lf + 2;
  if (lf === -1) return crlf + 4;
  return Math.min(crlf + 4, lf + 2);
}

/** Makes `socket` drop interim `100` responses before undici reads them. Call before undici has it. */
export function skipContinueResponses(socket: Socket): void {
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  const push = socket.push.bind(socket);
  /** The next bytes read start a response (a request was written and its final head has not come). */
  let watching = false;
  /** The start of a head that is not whole yet. */
  let held: Buffer | undefined;

  socket.write = function (chunk: unknown, ...rest: unknown[]) {
    if (typeof chunk === 'string' && REQUEST_LINE.test(chunk)) {
      watching = true;
      held = undefined;
    }
    return write(chunk, ...rest);
  };

  socket.push = function (chunk: unknown, encoding?: BufferEncoding): boolean {
    if (!watching || !Buffer.isBuffer(chunk)) {
      // The end of the stream (`null`) passes on whatever was held, for the parser to judge.
      if (chunk === null && held !== undefined) {
        push(held);
        held = undefined;
      }
      return push(chunk, encoding);
    }
    let bytes = held === undefined ? chunk : Buffer.concat([held, chunk]);
    held = undefined;
    const passed: Buffer[] = [];
    for (;;) {
      const seen = look(bytes);
      if (seen.kind === 'undecided') {
        held = bytes;
        bytes = bytes.subarray(bytes.length);
        break;
      }
      if (seen.kind === 'final') {
        watching = false;
        break;
      }
      if (!seen.skip) passed.push(bytes.subarray(0, seen.length));
      bytes = bytes.subarray(seen.length);
    }
    passed.push(bytes);
    return push(passed.length === 1 ? passed[0] : Buffer.concat(passed));
  };
}
