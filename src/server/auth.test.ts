import { describe, expect, it } from 'vitest';
import { createProxyAuth, presentedCredentials } from './auth.js';

describe('presentedCredentials', () => {
  it('reads x-api-key and a bearer token, with any letter case of the scheme', () => {
    expect(presentedCredentials({ 'x-api-key': 'k1', authorization: 'bearer  t1' })).toEqual(['k1', 't1']);
  });

  it('ignores other authorization schemes and empty values', () => {
    expect(presentedCredentials({ 'x-api-key': '', authorization: 'Basic dXNlcjpwYXNz' })).toEqual([]);
  });
});

describe('createProxyAuth', () => {
  it('lets every client through when no token is set', () => {
    expect(createProxyAuth(undefined)({})).toBe(true);
  });

  it('accepts the token in either header and refuses anything else', () => {
    const check = createProxyAuth('s3cret-token');
    expect(check({ 'x-api-key': 's3cret-token' })).toBe(true);
    expect(check({ authorization: 'Bearer s3cret-token' })).toBe(true);
    expect(check({ 'x-api-key': 'wrong', authorization: 'Bearer s3cret-token' })).toBe(true);
    expect(check({})).toBe(false);
    expect(check({ 'x-api-key': 's3cret-toke' })).toBe(false);
    expect(check({ 'x-api-key': 's3cret-token-and-more' })).toBe(false);
    expect(check({ authorization: 's3cret-token' })).toBe(false);
  });
});
