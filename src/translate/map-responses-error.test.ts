import { describe, expect, it } from 'vitest';
import { mapResponsesError } from './map-responses-error.js';

function summary(error: ReturnType<typeof mapResponsesError>) {
  return {
    code: error.code,
    status: error.status,
    type: error.body.error.type,
    retryable: error.retryable,
    provider: error.provider,
    message: error.message,
  };
}

describe('mapResponsesError', () => {
  it('maps exhausted quota to a 402 billing_error that is not retried', () => {
    expect(
      summary(mapResponsesError({ code: 'insufficient_quota', message: 'You exceeded your current quota' })),
    ).toStrictEqual({
      code: 'MODEL_EHTTP',
      status: 402,
      type: 'billing_error',
      retryable: false,
      provider: 'tpx',
      message: 'upstream stream error 402 insufficient_quota: You exceeded your current quota',
    });
  });

  it.each([
    ['rate_limit_exceeded', 429, 'rate_limit_error', true],
    ['server_error', 500, 'api_error', true],
    ['invalid_prompt', 400, 'invalid_request_error', false],
    ['context_length_exceeded', 400, 'invalid_request_error', false],
    ['invalid_request_error', 400, 'invalid_request_error', false],
  ] as const)('maps the code %s to %i %s (retryable: %s)', (code, status, type, retryable) => {
    const error = mapResponsesError({ code, message: 'no' });
    expect([error.status, error.body.error.type, error.retryable]).toStrictEqual([status, type, retryable]);
    expect(error.message).toBe(`upstream stream error ${status} ${code}: no`);
  });

  it("reads the error object under an error event's `error` member", () => {
    const error = mapResponsesError({ type: 'error', error: { code: 'server_error', message: 'boom' } });
    expect([error.status, error.body.error.type, error.message]).toStrictEqual([
      500,
      'api_error',
      'upstream stream error 500 server_error: boom',
    ]);
  });

  it('classifies by the type when there is no code', () => {
    const error = mapResponsesError({ type: 'insufficient_quota', message: 'pay up' });
    expect([error.status, error.body.error.type, error.retryable]).toStrictEqual([
      402,
      'billing_error',
      false,
    ]);
  });

  it('keeps a status the upstream stated over the one its code stands for', () => {
    const error = mapResponsesError({ code: 'server_error', status_code: 503, message: 'busy' });
    expect([error.status, error.body.error.type]).toStrictEqual([529, 'overloaded_error']);
  });

  it('classifies an unknown code as a stream error without a status', () => {
    const error = mapResponsesError({ code: 'mystery', message: 'what happened' });
    expect([error.status, error.body.error.type, error.provider, error.message]).toStrictEqual([
      500,
      'api_error',
      'tpx',
      'upstream stream error mystery: what happened',
    ]);
  });

  it('takes a bare string as the message', () => {
    expect(mapResponsesError('it broke').message).toBe('upstream stream error: it broke');
  });

  it('says the upstream gave no details when there is no error object at all', () => {
    const error = mapResponsesError(undefined);
    expect([error.status, error.body.error.type, error.provider, error.message]).toStrictEqual([
      500,
      'api_error',
      'tpx',
      'upstream stream error: the upstream reported a failure without details',
    ]);
    expect(mapResponsesError(null).message).toBe(
      'upstream stream error: the upstream reported a failure without details',
    );
  });
});
