import { describe, expect, it } from 'vitest';
import { mapUpstreamError } from './map-upstream-error.js';
import { isPassedBack, pickResponseHeaders } from './pick-response-headers.js';

// Every header an upstream may send that carries a request id, a retry hint or rate-limit state,
// in both providers' spellings, next to headers that must never travel further.
const UPSTREAM_HEADERS = {
  'request-id': 'req_a',
  'x-request-id': 'req_x',
  'retry-after': '7',
  'retry-after-ms': '6500',
  'x-should-retry': 'false',
  'anthropic-ratelimit-requests-remaining': '0',
  'x-ratelimit-remaining-requests': '0',
  'set-cookie': 'session=secret',
  'content-type': 'application/json',
  'x-ratelimit': 'no prefix match without the dash',
  'retry-after-seconds': 'not an exact name',
};

const KEPT = {
  'request-id': 'req_a',
  'x-request-id': 'req_x',
  'retry-after': '7',
  'retry-after-ms': '6500',
  'x-should-retry': 'false',
  'anthropic-ratelimit-requests-remaining': '0',
  'x-ratelimit-remaining-requests': '0',
};

describe('pickResponseHeaders: the one list of kept upstream headers', () => {
  it('keeps request ids, retry hints and both providers’ rate-limit headers, and nothing else', () => {
    expect(pickResponseHeaders(UPSTREAM_HEADERS)).toStrictEqual(KEPT);
  });

  it('lower-cases names and leaves out a header without a value', () => {
    expect(
      pickResponseHeaders({ 'Retry-After': '3', 'X-Should-Retry': 'true', 'request-id': undefined }),
    ).toStrictEqual({ 'retry-after': '3', 'x-should-retry': 'true' });
  });

  it('is the list an upstream error carries: the same headers on a tpx error as on any response', () => {
    const error = mapUpstreamError({
      status: 429,
      bodyText: '{"error":{"message":"slow down","type":"rate_limit_error"}}',
      headers: UPSTREAM_HEADERS,
      provider: 'tpx',
    });
    expect(error.headers).toStrictEqual(KEPT);
  });
});

describe('isPassedBack: the part of the kept headers the proxy hands to its client', () => {
  it('passes back retry hints and Anthropic rate-limit headers, in any case', () => {
    for (const name of [
      'retry-after',
      'Retry-After-Ms',
      'x-should-retry',
      'anthropic-ratelimit-tokens-reset',
    ]) {
      expect(isPassedBack(name)).toBe(true);
    }
  });

  it('keeps back request ids and the OpenAI-style rate-limit names, which the proxy does not rename', () => {
    for (const name of ['request-id', 'x-request-id', 'x-ratelimit-remaining-requests', 'set-cookie']) {
      expect(isPassedBack(name)).toBe(false);
    }
  });
});
