import { describe, expect, it } from 'vitest';
import { TransportError } from '../errors.js';
import type { Provider } from '../providers/provider.js';
import { redactError, redactValues, withRedactedErrors } from './redact-errors.js';

const SECRET = 'sk-secret-123';
const redact = redactValues([SECRET, 'short']);

describe('redactValues', () => {
  it('replaces every occurrence of each secret of six characters or more', () => {
    expect(redact(`key ${SECRET} and ${SECRET}; short stays`)).toBe(
      'key [redacted] and [redacted]; short stays',
    );
    expect(redactValues(['abcdef'])('xabcdefx')).toBe('x[redacted]x');
    expect(redactValues(['abcde'])('xabcdex')).toBe('xabcdex');
    expect(redactValues([])('anything')).toBe('anything');
  });
});

describe('redactError', () => {
  it('returns an error without a secret as it is', () => {
    const error = new TransportError('MODEL_EHTTP', 'plain', { cause: new Error('also plain') });
    expect(redactError(error, redact)).toBe(error);
    const other = new Error('plain');
    expect(redactError(other, redact)).toBe(other);
    expect(redactError(undefined, redact)).toBeUndefined();
  });

  it('rewrites the message and keeps every other field', () => {
    const cause = new Error('no secret here');
    const error = new TransportError('MODEL_EAUTH', `Incorrect API key provided: ${SECRET}`, {
      status: 401,
      type: 'authentication_error',
      retryable: false,
      headers: { 'request-id': 'req_9' },
      cause,
      provider: 'tpx',
      requestId: 'req_9',
      deadline: 'idle',
      retryAfterMs: 250,
    });
    const redacted = redactError(error, redact) as TransportError;
    expect(redacted).toBeInstanceOf(TransportError);
    expect({
      code: redacted.code,
      message: redacted.message,
      status: redacted.status,
      retryable: redacted.retryable,
      type: redacted.body.error.type,
      headers: redacted.headers,
      cause: redacted.cause,
      provider: redacted.provider,
      requestId: redacted.requestId,
      deadline: redacted.deadline,
      retryAfterMs: redacted.retryAfterMs,
    }).toStrictEqual({
      code: 'MODEL_EAUTH',
      message: 'Incorrect API key provided: [redacted]',
      status: 401,
      retryable: false,
      type: 'authentication_error',
      headers: { 'request-id': 'req_9' },
      cause,
      provider: 'tpx',
      requestId: 'req_9',
      deadline: 'idle',
      retryAfterMs: 250,
    });
  });

  it('looks for a secret in a cause down to six levels of nesting', () => {
    const deep = new TransportError('MODEL_EPROTO', 'bad body', {
      cause: { a: { b: { c: { d: { e: `Bearer ${SECRET}` } } } } },
    });
    expect((redactError(deep, redact) as TransportError).cause).toBeUndefined();
  });

  it('returns an error without a cause as it is, even for a secret that is part of the word undefined', () => {
    const error = new TransportError('MODEL_EHTTP', 'plain');
    expect(redactError(error, redactValues(['define']))).toBe(error);
  });

  it('drops a cause that holds a secret, however deep, even when the message holds none', () => {
    const error = new TransportError('MODEL_EPROTO', 'bad body', {
      retryable: true,
      cause: { request: { headers: { authorization: `Bearer ${SECRET}` } } },
    });
    const redacted = redactError(error, redact) as TransportError;
    expect(redacted).not.toBe(error);
    expect([redacted.message, redacted.cause, redacted.retryable, redacted.status]).toStrictEqual([
      'bad body',
      undefined,
      true,
      502,
    ]);
    expect([redacted.provider, redacted.requestId, redacted.deadline, redacted.retryAfterMs]).toStrictEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('turns any other thrown value that holds a secret into a plain Error without it', () => {
    const redacted = redactError(new TypeError(`fetch ${SECRET} failed`), redact);
    expect(redacted).toBeInstanceOf(Error);
    expect(String(redacted)).toBe('Error: TypeError: fetch [redacted] failed');
    expect(String(redactError(`text ${SECRET}`, redact))).toBe('Error: text [redacted]');
  });
});

describe('withRedactedErrors', () => {
  const failure = () => new TransportError('MODEL_EAUTH', `bad key ${SECRET}`);
  const failing: Provider = {
    name: 'anthropic',
    send: () => Promise.reject(failure()),
    // eslint-disable-next-line require-yield
    async *stream() {
      throw failure();
    },
    countTokens: () => Promise.reject(failure()),
    listModels: () => Promise.reject(failure()),
    inspect: () => Promise.reject(failure()),
  };
  const context = {} as never;
  const report = () => {};

  it('redacts the errors of every operation the provider has, and keeps its name', async () => {
    const provider = withRedactedErrors(failing, redact);
    expect(provider.name).toBe('anthropic');
    const expected = { code: 'MODEL_EAUTH', message: 'bad key [redacted]' };
    await expect(provider.send({} as never, {}, context, report)).rejects.toMatchObject(expected);
    await expect(provider.countTokens!({} as never, {}, context, report)).rejects.toMatchObject(expected);
    await expect(provider.listModels!({}, context, report)).rejects.toMatchObject(expected);
    await expect(provider.inspect!({}, context, report)).rejects.toMatchObject(expected);
    const iterate = async () => {
      for await (const _batch of provider.stream({} as never, {}, context, report));
    };
    await expect(iterate()).rejects.toMatchObject(expected);
  });

  it('passes values and batches through unchanged, and adds no operation the provider lacks', async () => {
    const batch = [{ type: 'ping' as const }];
    const working: Provider = {
      name: 'tpx',
      send: async () => ({ id: 'msg' }) as never,
      async *stream() {
        yield batch;
      },
      countTokens: async () => ({ input_tokens: 3 }),
    };
    const provider = withRedactedErrors(working, redact);
    expect(await provider.send({} as never, {}, context, report)).toStrictEqual({ id: 'msg' });
    expect(await provider.countTokens!({} as never, {}, context, report)).toStrictEqual({ input_tokens: 3 });
    const batches = [];
    for await (const each of provider.stream({} as never, {}, context, report)) batches.push(each);
    expect(batches).toStrictEqual([batch]);
    expect(batches[0]).toBe(batch);
    expect(Object.keys(provider).sort()).toStrictEqual(['countTokens', 'name', 'send', 'stream']);
  });

  it('gives a provider with neither count_tokens nor a model list neither', () => {
    const minimal: Provider = {
      name: 'tpx',
      send: async () => ({ id: 'msg' }) as never,
      async *stream() {
        yield [];
      },
    };
    const provider = withRedactedErrors(minimal, redact);
    expect(Object.keys(provider).sort()).toStrictEqual(['name', 'send', 'stream']);
  });
});
