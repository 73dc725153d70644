import { describe, expect, it } from 'vitest';
import {
  describeErrorObject,
  describeJsonError,
  nonEmptyString,
  readMessagesError,
} from './describe-json-error.js';

describe('readMessagesError', () => {
  it('reads the type and message of a Messages error body', () => {
    expect(
      readMessagesError({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    ).toStrictEqual({ type: 'overloaded_error', message: 'Overloaded' });
  });

  it('quotes the error object when it has no message string', () => {
    expect(readMessagesError({ type: 'error', error: { type: 'api_error', detail: 'x' } })).toStrictEqual({
      type: 'api_error',
      message: '{"type":"api_error","detail":"x"}',
    });
  });

  it('gives undefined for a body that is not a Messages error', () => {
    expect(
      readMessagesError({ type: 'message', error: { type: 'api_error', message: 'm' } }),
    ).toBeUndefined();
    expect(readMessagesError({ type: 'error', error: 'api_error' })).toBeUndefined();
    expect(readMessagesError({ type: 'error', error: { type: 5, message: 'm' } })).toBeUndefined();
    expect(readMessagesError('error')).toBeUndefined();
  });
});

describe('describeJsonError', () => {
  it('reads an OpenAI-style error object', () => {
    expect(
      describeJsonError({
        error: { message: 'Invalid model', type: 'invalid_request_error', code: 'model_not_found' },
      }),
    ).toStrictEqual({ message: 'Invalid model', code: 'model_not_found', type: 'invalid_request_error' });
  });

  it('reads an error given as a string, with the code and type beside it', () => {
    expect(
      describeJsonError({ error: 'model is loading', code: 'loading', type: 'unavailable' }),
    ).toStrictEqual({
      message: 'model is loading',
      code: 'loading',
      type: 'unavailable',
    });
    expect(describeJsonError({ error: 'busy', code: 503, type: '' })).toStrictEqual({
      message: 'busy',
      code: undefined,
      type: undefined,
    });
  });

  it('reads FastAPI details: a string, or the first three validation errors with their locations', () => {
    expect(describeJsonError({ detail: 'Not Found' })).toStrictEqual({
      message: 'Not Found',
      code: undefined,
      type: undefined,
    });
    expect(
      describeJsonError({
        detail: [
          { loc: ['body', 'messages', 0], msg: 'field required' },
          { msg: 'extra inputs are not permitted' },
          { loc: ['body', 'n'], type: 'int_parsing' },
          { loc: ['body', 'never'], msg: 'the fourth is left out' },
        ],
      }),
    ).toStrictEqual({
      message:
        'body.messages.0: field required; extra inputs are not permitted; body.n: {"loc":["body","n"],"type":"int_parsing"}',
      code: undefined,
      type: undefined,
    });
    expect(describeJsonError({ detail: ['plain', 3, null] })?.message).toBe('"plain"; 3; null');
  });

  it('reads a top-level message with its code and type', () => {
    expect(
      describeJsonError({ message: 'Rate limited', code: 'rate_limit_exceeded', type: 'requests' }),
    ).toStrictEqual({ message: 'Rate limited', code: 'rate_limit_exceeded', type: 'requests' });
  });

  it('recognises nothing in bodies without a non-empty error, detail or message', () => {
    expect(describeJsonError({ error: '' })).toBeUndefined();
    expect(describeJsonError({ detail: '' })).toBeUndefined();
    expect(describeJsonError({ detail: [] })).toBeUndefined();
    expect(describeJsonError({ message: '' })).toBeUndefined();
    expect(describeJsonError({ message: 42 })).toBeUndefined();
    expect(describeJsonError({ status: 'failed' })).toBeUndefined();
    expect(describeJsonError(['error'])).toBeUndefined();
    expect(describeJsonError('error')).toBeUndefined();
    expect(describeJsonError(null)).toBeUndefined();
  });
});

describe('describeErrorObject', () => {
  it('appends what the provider said (OpenRouter metadata.raw) to the message, naming the provider', () => {
    expect(
      describeErrorObject({
        message: 'Provider returned error',
        code: 400,
        metadata: { raw: 'context too long', provider_name: 'Groq' },
      }),
    ).toStrictEqual({
      message: 'Provider returned error (Groq: context too long)',
      code: undefined,
      type: undefined,
    });
  });

  it('quotes a raw detail that is not a string, and uses it alone when there is no message', () => {
    expect(describeErrorObject({ metadata: { raw: { error: 'bad' } }, type: 'upstream' })).toStrictEqual({
      message: '{"error":"bad"}',
      code: undefined,
      type: 'upstream',
    });
    expect(
      describeErrorObject({ message: '', metadata: { raw: 'only this', provider_name: '' } }).message,
    ).toBe('only this');
  });

  it('cuts a long raw detail to 500 characters', () => {
    const message = describeErrorObject({ message: 'm', metadata: { raw: 'x'.repeat(600) } }).message;
    expect(message).toBe(`m (${'x'.repeat(500)}…)`);
  });

  it('ignores a missing or null raw detail', () => {
    expect(describeErrorObject({ message: 'm', metadata: { raw: null } }).message).toBe('m');
    expect(describeErrorObject({ message: 'm', metadata: { provider_name: 'Groq' } }).message).toBe('m');
    expect(describeErrorObject({ message: 'm', metadata: 'raw' }).message).toBe('m');
    expect(describeErrorObject({ code: 'c' })).toStrictEqual({
      message: undefined,
      code: 'c',
      type: undefined,
    });
  });
});

describe('nonEmptyString', () => {
  it('keeps a non-empty string only', () => {
    expect(nonEmptyString('a')).toBe('a');
    expect(nonEmptyString('')).toBeUndefined();
    expect(nonEmptyString(1)).toBeUndefined();
  });
});
