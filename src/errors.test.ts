import { describe, expect, it } from 'vitest';
import {
  errorTypeForStatus,
  isRetryableStatus,
  isTransportError,
  toTransportError,
  TransportError,
  type MessagesErrorType,
  type TransportErrorCode,
} from './errors.js';
import { validateStreamEvent } from './protocol/validate-messages.js';

describe('TransportError', () => {
  // The code table of DESIGN.md ("Contracts that tests and users rely on"), with the Messages error type
  // that goes with each status (docs/protocol.md A.8). MODEL_EHTTP and MODEL_ECONFIG have no status of their
  // own: an upstream's status is passed in, and a configuration error never reaches the wire.
  const defaults: [TransportErrorCode, number, MessagesErrorType][] = [
    ['MODEL_EAUTH', 401, 'authentication_error'],
    ['MODEL_EINVAL', 400, 'invalid_request_error'],
    ['MODEL_EPAIRING', 400, 'invalid_request_error'],
    ['MODEL_EHTTP', 500, 'api_error'],
    ['MODEL_ETRANSPORT', 502, 'api_error'],
    ['MODEL_EPROTO', 502, 'api_error'],
    ['MODEL_ETIMEOUT', 504, 'timeout_error'],
    ['MODEL_EABORTED', 499, 'api_error'],
    ['MODEL_ETOOBIG', 413, 'request_too_large'],
    ['MODEL_ECONFIG', 500, 'api_error'],
  ];

  it.each(defaults)('gives %s the status %i and the error type %s by default', (code, status, type) => {
    const error = new TransportError(code, 'what happened');
    expect(error.code).toBe(code);
    expect(error.status).toBe(status);
    expect(error.body.error.type).toBe(type);
  });

  it('marks a network failure and a timeout retryable, and an abort or a bad request not', () => {
    expect(new TransportError('MODEL_ETRANSPORT', 'reset').retryable).toBe(true);
    expect(new TransportError('MODEL_ETIMEOUT', 'slow').retryable).toBe(true);
    expect(new TransportError('MODEL_EABORTED', 'cancelled').retryable).toBe(false);
    expect(new TransportError('MODEL_EINVAL', 'bad').retryable).toBe(false);
    expect(new TransportError('MODEL_EPAIRING', 'unpaired').retryable).toBe(false);
    expect(new TransportError('MODEL_EAUTH', 'no key').retryable).toBe(false);
  });

  it('gives a timeout, an abort and a network failure three distinct codes and statuses', () => {
    const statuses = new Set(
      (['MODEL_ETIMEOUT', 'MODEL_EABORTED', 'MODEL_ETRANSPORT'] as const).map(
        (code) => new TransportError(code, 'x').status,
      ),
    );
    expect(statuses.size).toBe(3);
  });

  it('builds a Messages error body from the message and the type', () => {
    const error = new TransportError('MODEL_EINVAL', 'messages[0].role: must be one of "user", "assistant"');
    expect(error.body).toStrictEqual({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: 'messages[0].role: must be one of "user", "assistant"',
      },
    });
    expect('request_id' in error.body).toBe(false);
  });

  it('adds the upstream request id to the body when it is known', () => {
    const error = new TransportError('MODEL_EHTTP', 'overloaded', {
      status: 529,
      type: 'overloaded_error',
      requestId: 'req_011CabcDEF',
    });
    expect(error.body).toStrictEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'overloaded' },
      request_id: 'req_011CabcDEF',
    });
    expect(error.requestId).toBe('req_011CabcDEF');
  });

  it('makes a body that is a valid Messages error event', () => {
    const error = new TransportError('MODEL_ETIMEOUT', 'idle for 120000 ms', { requestId: 'req_1' });
    expect(validateStreamEvent(error.body)).toEqual({ ok: true, value: error.body });
  });

  it('lets options override the status, the error type and retryability', () => {
    const error = new TransportError('MODEL_EHTTP', 'rate limited', {
      status: 429,
      type: 'rate_limit_error',
      retryable: true,
      retryAfterMs: 2000,
      headers: { 'retry-after': '2' },
      provider: 'tpx',
    });
    expect(error.status).toBe(429);
    expect(error.body.error.type).toBe('rate_limit_error');
    expect(error.retryable).toBe(true);
    expect(error.retryAfterMs).toBe(2000);
    expect(error.headers).toEqual({ 'retry-after': '2' });
    expect(error.provider).toBe('tpx');
  });

  it('keeps the cause, and has none when none was given', () => {
    const cause = new Error('ECONNRESET');
    expect(new TransportError('MODEL_ETRANSPORT', 'socket closed', { cause }).cause).toBe(cause);
    expect('cause' in new TransportError('MODEL_ETRANSPORT', 'socket closed')).toBe(false);
  });

  it('is an Error named TransportError with the message it was given', () => {
    const error = new TransportError('MODEL_EPROTO', 'bad JSON from upstream');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('TransportError');
    expect(error.message).toBe('bad JSON from upstream');
    expect(error.headers).toEqual({});
  });
});

describe('isTransportError', () => {
  it('recognises a TransportError', () => {
    expect(isTransportError(new TransportError('MODEL_EINVAL', 'x'))).toBe(true);
  });

  it('recognises one made by another copy of the package, by its registered brand symbol', () => {
    // A second copy of the package has its own class, so `instanceof` fails; the brand is
    // `Symbol.for(...)`, shared by every copy in the process.
    const fromAnotherCopy = { [Symbol.for('tpx-transport.TransportError')]: true, code: 'MODEL_EINVAL' };
    expect(fromAnotherCopy instanceof TransportError).toBe(false);
    expect(isTransportError(fromAnotherCopy)).toBe(true);
  });

  it('rejects errors and values without the brand', () => {
    expect(isTransportError(new Error('x'))).toBe(false);
    expect(isTransportError({ code: 'MODEL_EINVAL', status: 400 })).toBe(false);
    expect(isTransportError({ [Symbol('tpx-transport.TransportError')]: true })).toBe(false);
    expect(isTransportError({ [Symbol.for('tpx-transport.TransportError')]: 'yes' })).toBe(false);
    expect(isTransportError(null)).toBe(false);
    expect(isTransportError(undefined)).toBe(false);
    expect(isTransportError('MODEL_EINVAL')).toBe(false);
  });
});

describe('errorTypeForStatus', () => {
  // docs/protocol.md A.8 (Anthropic's statuses) and D.7 (an OpenAI-compatible upstream's).
  const table: [number, MessagesErrorType][] = [
    [400, 'invalid_request_error'],
    [422, 'invalid_request_error'],
    [401, 'authentication_error'],
    [402, 'billing_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [408, 'timeout_error'],
    [409, 'conflict_error'],
    [413, 'request_too_large'],
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [502, 'api_error'],
    [503, 'overloaded_error'],
    [504, 'timeout_error'],
    [529, 'overloaded_error'],
  ];

  it.each(table)('maps %i to %s', (status, type) => {
    expect(errorTypeForStatus(status)).toBe(type);
  });

  it('maps other 4xx statuses to invalid_request_error and other 5xx to api_error', () => {
    expect(errorTypeForStatus(418)).toBe('invalid_request_error');
    expect(errorTypeForStatus(451)).toBe('invalid_request_error');
    expect(errorTypeForStatus(501)).toBe('api_error');
    expect(errorTypeForStatus(599)).toBe('api_error');
  });
});

describe('isRetryableStatus', () => {
  it('retries 408, 409, 429 and every 5xx, 529 included', () => {
    for (const status of [408, 409, 429, 500, 502, 503, 504, 529])
      expect(isRetryableStatus(status)).toBe(true);
  });

  it('does not retry other 4xx statuses', () => {
    for (const status of [400, 401, 402, 403, 404, 413, 422]) expect(isRetryableStatus(status)).toBe(false);
  });
});

describe('toTransportError', () => {
  it('returns a TransportError as it is', () => {
    const error = new TransportError('MODEL_ETIMEOUT', 'slow');
    expect(toTransportError(error)).toBe(error);
  });

  it('wraps an Error with its message and keeps it as the cause, as MODEL_EPROTO by default', () => {
    const cause = new SyntaxError('Unexpected token < in JSON');
    const error = toTransportError(cause);
    expect(error.code).toBe('MODEL_EPROTO');
    expect(error.message).toBe('Unexpected token < in JSON');
    expect(error.cause).toBe(cause);
  });

  it('uses the fallback code it is given, and stringifies a thrown non-Error', () => {
    const error = toTransportError('socket hang up', 'MODEL_ETRANSPORT');
    expect(error.code).toBe('MODEL_ETRANSPORT');
    expect(error.message).toBe('socket hang up');
    expect(error.status).toBe(502);
  });
});
