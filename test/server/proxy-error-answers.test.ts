/**
 * How the proxy turns failures into answers a Messages client reads: its own refusals (`proxyError`),
 * any thrown value as an HTTP answer or an SSE `error` frame, node's parser errors written on the raw
 * socket, and the 508 of a request loop.
 */
import { Duplex } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TransportError } from '../../src/errors.js';
import { answerClientError } from '../../src/server/answer-client-error.js';
import { asTransportError, errorFrame, errorResponse, proxyError } from '../../src/server/error-response.js';
import { HOP_HEADER, createInstanceId, hasPassedThrough, loopError } from '../../src/server/loop-guard.js';

describe('proxyError', () => {
  it.each([
    [400, 'MODEL_EINVAL', 'invalid_request_error', false],
    [401, 'MODEL_EAUTH', 'authentication_error', false],
    [403, 'MODEL_EINVAL', 'permission_error', false],
    [404, 'MODEL_EINVAL', 'not_found_error', false],
    [405, 'MODEL_EINVAL', 'invalid_request_error', false],
    [408, 'MODEL_ETIMEOUT', 'timeout_error', false],
    [413, 'MODEL_ETOOBIG', 'request_too_large', false],
    [415, 'MODEL_EINVAL', 'invalid_request_error', false],
  ] as const)('answers %i with code %s, type %s and retryable %s', (status, code, type, retryable) => {
    const error = proxyError(status, 'what went wrong');
    expect({
      code: error.code,
      status: error.status,
      retryable: error.retryable,
      body: error.body,
    }).toStrictEqual({
      code,
      status,
      retryable,
      body: { type: 'error', error: { type, message: 'what went wrong' } },
    });
  });
});

describe('errorResponse', () => {
  it('answers a transport error with its status and body, the request id added, and its retry headers', () => {
    const error = new TransportError('MODEL_EHTTP', 'slow down', {
      type: 'rate_limit_error',
      status: 429,
      headers: { 'retry-after': '7', 'request-id': 'req_not_passed_back' },
    });
    expect(errorResponse(error, 'req_own')).toStrictEqual({
      kind: 'json',
      status: 429,
      headers: { 'content-type': 'application/json', 'request-id': 'req_own', 'retry-after': '7' },
      body: JSON.stringify({
        type: 'error',
        error: { type: 'rate_limit_error', message: 'slow down' },
        request_id: 'req_own',
      }),
    });
  });

  it('keeps the request id the error already carries', () => {
    const error = new TransportError('MODEL_EPROTO', 'bad', { requestId: 'req_upstream' });
    expect(JSON.parse(errorResponse(error, 'req_own').body)).toStrictEqual({
      type: 'error',
      error: { type: 'api_error', message: 'bad' },
      request_id: 'req_upstream',
    });
  });

  it("passes the upstream's rate-limit headers on, the error's own winning over them", () => {
    const error = new TransportError('MODEL_EHTTP', 'busy', {
      type: 'overloaded_error',
      headers: { 'retry-after': '3', 'x-should-retry': 'true' },
    });
    const response = errorResponse(error, 'req_own', {
      'Retry-After': '9',
      'anthropic-ratelimit-requests-remaining': '0',
      'x-ratelimit-remaining': '0',
      'content-length': '12',
    });
    expect(response.headers).toStrictEqual({
      'content-type': 'application/json',
      'request-id': 'req_own',
      'retry-after': '3',
      'anthropic-ratelimit-requests-remaining': '0',
      'x-should-retry': 'true',
    });
  });

  it.each([
    [399, 500],
    [400, 400],
    [599, 599],
    [600, 500],
    [200, 500],
  ])('answers an error whose status is %i with HTTP %i', (status, answered) => {
    const error = new TransportError('MODEL_EPROTO', 'odd', { status });
    expect(errorResponse(error, 'req_x').status).toBe(answered);
  });

  it('answers anything that is not a transport error as a 500 api_error that hides it', () => {
    const thrown = new Error('secret internals');
    const response = errorResponse(thrown, 'req_own');
    expect(response.status).toBe(500);
    expect(JSON.parse(response.body)).toStrictEqual({
      type: 'error',
      error: { type: 'api_error', message: 'the proxy failed while handling this request' },
      request_id: 'req_own',
    });
    const wrapped = asTransportError(thrown);
    expect([wrapped.code, wrapped.cause]).toStrictEqual(['MODEL_EPROTO', thrown]);
    const own = proxyError(404, 'x');
    expect(asTransportError(own)).toBe(own);
  });
});

describe('errorFrame', () => {
  it('is one SSE error event with the Messages error body and the request id', () => {
    expect(errorFrame(new TransportError('MODEL_EHTTP', 'busy', { type: 'overloaded_error' }), 'req_1')).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"busy"},"request_id":"req_1"}\n\n',
    );
    expect(errorFrame(new Error('x'), 'req_2')).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"api_error","message":"the proxy failed while handling this request"},"request_id":"req_2"}\n\n',
    );
  });
});

describe('the request loop guard', () => {
  it('recognises its instance id among the hop header entries, however they are listed', () => {
    expect(hasPassedThrough({}, 'abc')).toBe(false);
    expect(hasPassedThrough({ [HOP_HEADER]: 'abc' }, 'abc')).toBe(true);
    expect(hasPassedThrough({ [HOP_HEADER]: 'xyz, abc ' }, 'abc')).toBe(true);
    expect(hasPassedThrough({ [HOP_HEADER]: ['xyz', ' abc'] }, 'abc')).toBe(true);
    expect(hasPassedThrough({ [HOP_HEADER]: ['xy', 'zabc'] }, 'abc')).toBe(false);
    expect(hasPassedThrough({ [HOP_HEADER]: 'abcd,xabc' }, 'abc')).toBe(false);
    expect(HOP_HEADER).toBe('tpx-hop');
  });

  it('answers a loop with a 508 that names the proxy and tells clients not to retry', () => {
    const error = loopError('http://127.0.0.1:8787');
    expect({
      code: error.code,
      status: error.status,
      retryable: error.retryable,
      headers: error.headers,
      type: error.body.error.type,
    }).toStrictEqual({
      code: 'MODEL_EPROTO',
      status: 508,
      retryable: false,
      headers: { 'x-should-retry': 'false' },
      type: 'api_error',
    });
    expect(error.message).toBe(
      'request loop: this request already passed through this proxy, so its upstream base URL points at this ' +
        'proxy (http://127.0.0.1:8787). Unset ANTHROPIC_BASE_URL (and ANTHROPIC_API_KEY) in the shell that starts tpx, or set it ' +
        'to the real upstream',
    );
  });

  it('makes a different URL-safe instance id each time', () => {
    const ids = new Set(Array.from({ length: 20 }, () => createInstanceId()));
    expect(ids.size).toBe(20);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{12}$/);
  });
});

/** A socket stand-in that records what is written and whether it was destroyed. */
function fakeSocket(writable = true) {
  const written: string[] = [];
  const socket = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, callback) {
      written.push(chunk.toString('utf8'));
      callback();
    },
  });
  if (!writable) socket.end();
  const destroy = vi.spyOn(socket, 'destroy');
  return { socket, written, destroy };
}

function parseAnswer(text: string) {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((line) => line.split(': ') as [string, string]));
  return {
    statusLine,
    headers,
    body: JSON.parse(body) as { type: string; error: { type: string; message: string }; request_id: string },
  };
}

describe('answerClientError', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([
    [
      { code: 'HPE_HEADER_OVERFLOW', message: 'Header overflow' },
      'HTTP/1.1 431 Request Header Fields Too Large',
      'invalid_request_error',
      'the request headers are larger than this proxy accepts (node --max-http-header-size)',
    ],
    [
      { code: 'HPE_CHUNK_EXTENSIONS_OVERFLOW', message: 'x' },
      'HTTP/1.1 413 Content Too Large',
      'request_too_large',
      'the chunk extensions of the request body are too large',
    ],
    [
      { code: 'ERR_HTTP_REQUEST_TIMEOUT', message: 'x' },
      'HTTP/1.1 408 Request Timeout',
      'timeout_error',
      'the request headers did not arrive in time; send the request line and headers at once',
    ],
    [
      {
        code: 'HPE_INVALID_METHOD',
        message: 'Parse Error: Invalid method encountered',
        reason: 'Invalid method',
      },
      'HTTP/1.1 400 Bad Request',
      'invalid_request_error',
      'the request is not valid HTTP/1.1 and could not be read: Invalid method (HPE_INVALID_METHOD)',
    ],
    [
      { code: 'HPE_INVALID_METHOD', message: 'Parse Error: Invalid method', reason: '' },
      'HTTP/1.1 400 Bad Request',
      'invalid_request_error',
      'the request is not valid HTTP/1.1 and could not be read: Parse Error: Invalid method (HPE_INVALID_METHOD)',
    ],
    [
      { message: 'broken', reason: 42 },
      'HTTP/1.1 400 Bad Request',
      'invalid_request_error',
      'the request is not valid HTTP/1.1 and could not be read: broken',
    ],
  ])('answers %j in the Messages error shape and closes', (fields, statusLine, type, message) => {
    vi.useFakeTimers();
    const { socket, written, destroy } = fakeSocket();
    answerClientError(Object.assign(new Error(fields.message), fields), socket, false);
    const answer = parseAnswer(written.join(''));
    expect(answer.statusLine).toBe(statusLine);
    expect(answer.body.type).toBe('error');
    expect(answer.body.error).toStrictEqual({ type, message });
    expect(answer.body.request_id).toMatch(/^req_[A-Za-z0-9_-]{25,}$/);
    expect(answer.headers).toStrictEqual({
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(JSON.stringify(answer.body))),
      'request-id': answer.body.request_id,
      'x-should-retry': 'false',
      connection: 'close',
    });
    expect(socket.writableEnded).toBe(true);
    // The socket is destroyed one second later, not before.
    vi.advanceTimersByTime(999);
    expect(destroy).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(destroy).toHaveBeenCalledTimes(1);
  });

  it('writes nothing and destroys the socket for a reset, a closed socket, or a response already started', () => {
    for (const [error, writable, started] of [
      [Object.assign(new Error('reset'), { code: 'ECONNRESET' }), true, false],
      [Object.assign(new Error('x'), { code: 'HPE_INVALID_METHOD' }), false, false],
      [Object.assign(new Error('x'), { code: 'HPE_INVALID_METHOD' }), true, true],
    ] as const) {
      const { socket, written, destroy } = fakeSocket(writable);
      answerClientError(error, socket, started);
      expect(written).toStrictEqual([]);
      expect(destroy).toHaveBeenCalledTimes(1);
    }
  });
});
