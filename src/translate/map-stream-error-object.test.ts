import { describe, expect, it } from 'vitest';
import { mapStreamErrorObject } from './map-stream-error-object.js';

function summary(error: unknown) {
  const mapped = mapStreamErrorObject(error, 'tpx');
  return [mapped.status, mapped.body.error.type, mapped.retryable, mapped.message];
}

describe('mapStreamErrorObject: what it reads', () => {
  it('reads the error object inside a chunk, and the chunk itself when its error member is null', () => {
    expect(summary({ error: { code: 'bad', message: 'inner' } })).toStrictEqual([
      500,
      'api_error',
      true,
      'upstream stream error bad: inner',
    ]);
    expect(summary({ error: null, code: 'top', message: 'outer' })).toStrictEqual([
      500,
      'api_error',
      true,
      'upstream stream error top: outer',
    ]);
    expect(summary({ code: 'top', message: 'outer' })).toStrictEqual([
      500,
      'api_error',
      true,
      'upstream stream error top: outer',
    ]);
  });

  it('says so for an empty message string, and quotes values that are neither strings nor objects', () => {
    expect(summary('')).toStrictEqual([
      500,
      'api_error',
      true,
      'upstream stream error: the upstream reported an error without a message',
    ]);
    expect(summary(42)).toStrictEqual([500, 'api_error', true, 'upstream stream error: 42']);
    expect(summary({ status: 'broken' })).toStrictEqual([
      500,
      'api_error',
      true,
      'upstream stream error: {"status":"broken"}',
    ]);
  });

  it('names the stated status and code in the message, and gives the provider', () => {
    const mapped = mapStreamErrorObject(
      { error: { message: 'bad tool', code: 'tool_use_failed', status_code: 400 } },
      'anthropic',
    );
    expect([
      mapped.code,
      mapped.status,
      mapped.body.error.type,
      mapped.retryable,
      mapped.provider,
      mapped.message,
    ]).toStrictEqual([
      'MODEL_EHTTP',
      400,
      'invalid_request_error',
      false,
      'anthropic',
      'upstream stream error 400 tool_use_failed: bad tool',
    ]);
  });
});

describe('mapStreamErrorObject: rate limits', () => {
  it.each([
    [{ status_code: 429, message: 'slow' }, 'upstream stream error 429: slow'],
    [{ type: 'rate_limit_error', message: 'slow' }, 'upstream stream error: slow'],
    [{ code: 'rate_limit_exceeded', message: 'slow' }, 'upstream stream error rate_limit_exceeded: slow'],
    [{ type: 'rate_limit_exceeded', message: 'slow' }, 'upstream stream error: slow'],
  ])('reads %j as a 429 rate_limit_error', (error, message) => {
    expect(summary(error)).toStrictEqual([429, 'rate_limit_error', true, message]);
  });

  it('lets a stated status other than 429 decide over a rate-limit code or type', () => {
    expect(summary({ status_code: 400, code: 'rate_limit_exceeded', message: 'x' })).toStrictEqual([
      400,
      'invalid_request_error',
      false,
      'upstream stream error 400 rate_limit_exceeded: x',
    ]);
    expect(summary({ status: 403, type: 'rate_limit_error', message: 'x' })).toStrictEqual([
      403,
      'permission_error',
      false,
      'upstream stream error 403: x',
    ]);
  });
});

describe('mapStreamErrorObject: overload', () => {
  it.each([
    [{ code: 'server_is_overloaded', message: 'x' }],
    [{ code: 'slow_down', status_code: 400, message: 'x' }],
    [{ type: 'overloaded_error', message: 'x' }],
    [{ status_code: 503, message: 'x' }],
    [{ status_code: 529, message: 'x' }],
    [{ status_code: 500, message: 'The engine is overloaded' }],
    [{ status_code: 502, message: 'please slow down' }],
    [{ message: 'The engine is overloaded' }],
  ])('reads %j as a 529 overloaded_error', (error) => {
    const [status, type, retryable] = summary(error);
    expect([status, type, retryable]).toStrictEqual([529, 'overloaded_error', true]);
  });

  it('does not read overload from the words of an error with a status below 500 or a stated type', () => {
    expect(summary({ status_code: 400, message: 'overloaded context' }).slice(0, 3)).toStrictEqual([
      400,
      'invalid_request_error',
      false,
    ]);
    expect(summary({ status_code: 499, message: 'overloaded' }).slice(0, 3)).toStrictEqual([
      499,
      'invalid_request_error',
      false,
    ]);
    expect(
      summary({ type: 'invalid_request_error', message: 'overloaded context' }).slice(0, 3),
    ).toStrictEqual([500, 'invalid_request_error', true]);
  });

  it('takes the upstream type when it is a Messages type and nothing else is stated, else api_error', () => {
    expect(summary({ type: 'authentication_error', message: 'x' }).slice(0, 2)).toStrictEqual([
      500,
      'authentication_error',
    ]);
    expect(summary({ type: 'weird_error', message: 'x' }).slice(0, 2)).toStrictEqual([500, 'api_error']);
    expect(
      summary({ status_code: 404, type: 'authentication_error', message: 'x' }).slice(0, 2),
    ).toStrictEqual([404, 'not_found_error']);
  });
});
