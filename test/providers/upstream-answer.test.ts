/**
 * Reading an upstream's answer the same way on every path: an error status mapped from its body (read
 * within a limit, its content type passed on), and JSON that is too deep or not JSON at all refused with
 * an excerpt a person can recognise.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { TransportError } from '../../src/errors.js';
import type { HttpResponse } from '../../src/providers/http-exchange.js';
import { ResponseBody } from '../../src/providers/response-body.js';
import { ERROR_BODY_LIMIT, parseUpstreamJson, upstreamError } from '../../src/providers/upstream-answer.js';
import { MAX_JSON_DEPTH } from '../../src/protocol/json-nesting-depth.js';
import { testAttempt, type TestAttempt } from './attempt-context.js';

let attempt: TestAttempt | undefined;
afterEach(async () => {
  await attempt?.close();
  attempt = undefined;
});

function answer(
  status: number,
  headers: Record<string, string>,
  ...chunks: (string | Buffer)[]
): HttpResponse {
  return {
    status,
    headers,
    body: ResponseBody.of(
      chunks.map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk)),
    ),
  };
}

function errorOf(response: HttpResponse, provider: 'tpx' | 'anthropic' = 'tpx'): Promise<TransportError> {
  attempt ??= testAttempt(provider);
  return upstreamError(response, attempt.context, provider);
}

function failure(call: () => unknown): Error {
  try {
    call();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}

const PAGE = '<html><title>404 Not Found</title></html>';

describe('upstreamError', () => {
  it('maps the status and the error the body carries', async () => {
    const error = await errorOf(answer(500, {}, '{"error":{"message":"x"}}'), 'anthropic');
    expect({ code: error.code, status: error.status, message: error.message }).toStrictEqual({
      code: 'MODEL_EHTTP',
      status: 500,
      message: '500 Internal Server Error: x',
    });
  });

  it('passes the content type on, so an HTML page is named by it', async () => {
    const typed = await errorOf(answer(404, { 'content-type': 'text/html' }, PAGE));
    expect(typed.message).toBe(
      'upstream answered 404 Not Found with a text/html body, not JSON — is the base URL right? (404 Not Found)',
    );
    const untyped = await errorOf(answer(404, {}, PAGE));
    expect(untyped.message).toBe(
      'upstream answered 404 Not Found with an HTML body, not JSON — is the base URL right? (404 Not Found)',
    );
  });

  it('reads an error body of exactly the limit, and explains by the status alone one that is longer', async () => {
    const body = '{"error":{"message":"x"}}';
    const exact = await errorOf(answer(500, {}, ' '.repeat(ERROR_BODY_LIMIT - body.length), body));
    expect(exact.message).toBe('500 Internal Server Error: x');
    const longer = await errorOf(answer(500, {}, ' '.repeat(ERROR_BODY_LIMIT - body.length + 1), body));
    expect({ code: longer.code, status: longer.status, message: longer.message }).toStrictEqual({
      code: 'MODEL_EHTTP',
      status: 500,
      message: 'upstream answered 500 Internal Server Error with an empty body',
    });
  });
});

describe('parseUpstreamJson', () => {
  it('gives back the value of valid JSON', () => {
    expect(parseUpstreamJson('{"a":[1,{"b":null}]}', 'response', 'tpx')).toStrictEqual({
      a: [1, { b: null }],
    });
  });

  it('refuses text that is not JSON, quoting its start with runs of white space made one space', () => {
    const error = failure(() => parseUpstreamJson('{"a":\n\n  1', 'stream chunk', 'tpx'));
    expect(error).toMatchObject({ code: 'MODEL_EPROTO', status: 502, provider: 'tpx' });
    expect(error.message).toBe('the tpx stream chunk is not valid JSON: "{\\"a\\": 1"');
    const long = failure(() => parseUpstreamJson(`<${'x'.repeat(200)}`, 'response', 'anthropic'));
    expect(long.message).toBe(`the anthropic response is not valid JSON: "<${'x'.repeat(119)}"`);
  });

  it('refuses JSON nested deeper than the limit, and takes it at the limit', () => {
    const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    expect(() => parseUpstreamJson(nested(MAX_JSON_DEPTH), 'response', 'tpx')).not.toThrow();
    const error = failure(() => parseUpstreamJson(nested(MAX_JSON_DEPTH + 1), 'response', 'tpx'));
    expect(error).toMatchObject({
      code: 'MODEL_EPROTO',
      provider: 'tpx',
      message: `the tpx response nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`,
    });
  });
});
