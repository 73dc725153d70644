import { describe, expect, it } from 'vitest';
import { pickResponseHeaders } from '../translate/pick-response-headers.js';
import { passBackHeaders } from './pass-back-headers.js';

describe('passBackHeaders', () => {
  it('hands the client exactly the kept upstream headers minus request ids and x-ratelimit-*', () => {
    const upstream = pickResponseHeaders({
      'request-id': 'req_a',
      'x-request-id': 'req_x',
      'retry-after': '7',
      'retry-after-ms': '6500',
      'x-should-retry': 'false',
      'anthropic-ratelimit-requests-remaining': '0',
      'x-ratelimit-remaining-requests': '0',
      'set-cookie': 'session=secret',
    });
    const target: Record<string, string> = { 'request-id': 'req_proxy' };
    passBackHeaders(upstream, target);
    expect(target).toStrictEqual({
      'request-id': 'req_proxy',
      'retry-after': '7',
      'retry-after-ms': '6500',
      'x-should-retry': 'false',
      'anthropic-ratelimit-requests-remaining': '0',
    });
  });

  it('lower-cases the names it copies', () => {
    const target: Record<string, string> = {};
    passBackHeaders({ 'Retry-After': '2', 'Anthropic-RateLimit-Tokens-Remaining': '10' }, target);
    expect(target).toStrictEqual({ 'retry-after': '2', 'anthropic-ratelimit-tokens-remaining': '10' });
  });
});
