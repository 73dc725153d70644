import { describe, expect, it } from 'vitest';
import { TransportError } from '../errors.js';
import { withRetriesSpent } from './with-retries-spent.js';

describe('withRetriesSpent', () => {
  it('adds x-should-retry: false and keeps everything else the error says', () => {
    const cause = new Error('socket hang up');
    const error = new TransportError('MODEL_EHTTP', '529 overloaded_error: busy', {
      status: 529,
      type: 'overloaded_error',
      retryable: true,
      headers: { 'retry-after': '3' },
      cause,
      provider: 'anthropic',
      requestId: 'req_1',
      deadline: 'total',
      retryAfterMs: 3_000,
    });
    const spent = withRetriesSpent(error);
    expect(spent).not.toBe(error);
    expect(spent).toBeInstanceOf(TransportError);
    expect({
      code: spent.code,
      message: spent.message,
      status: spent.status,
      retryable: spent.retryable,
      body: spent.body,
      headers: spent.headers,
      cause: spent.cause,
      provider: spent.provider,
      requestId: spent.requestId,
      deadline: spent.deadline,
      retryAfterMs: spent.retryAfterMs,
    }).toStrictEqual({
      code: 'MODEL_EHTTP',
      message: '529 overloaded_error: busy',
      status: 529,
      retryable: true,
      body: {
        type: 'error',
        error: { type: 'overloaded_error', message: '529 overloaded_error: busy' },
        request_id: 'req_1',
      },
      headers: { 'retry-after': '3', 'x-should-retry': 'false' },
      cause,
      provider: 'anthropic',
      requestId: 'req_1',
      deadline: 'total',
      retryAfterMs: 3_000,
    });
    expect(error.headers).toStrictEqual({ 'retry-after': '3' });
  });

  it('leaves out what the error did not have', () => {
    const spent = withRetriesSpent(new TransportError('MODEL_ETRANSPORT', 'connection reset'));
    expect([spent.provider, spent.requestId, spent.deadline, spent.retryAfterMs, spent.cause]).toStrictEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(spent.headers).toStrictEqual({ 'x-should-retry': 'false' });
    expect([spent.status, spent.retryable, spent.body.error.type]).toStrictEqual([502, true, 'api_error']);
  });

  it('returns an error that already says x-should-retry: false as it is', () => {
    const error = new TransportError('MODEL_EHTTP', 'no', { headers: { 'x-should-retry': 'false' } });
    expect(withRetriesSpent(error)).toBe(error);
  });
});
