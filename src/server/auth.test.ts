import { describe, expect, it } from 'vitest';
import { createProxyAuth, presentedCredentials } from './auth.js';

describe('presentedCredentials', () => {
  it('reads x-api-key and a bearer token, with any letter case of the scheme', () => {
    expect(presentedCredentials({ 'x-api-key': 'k1', authorization: 'bearer  t1' })).toEqual(['k1', 't1']);
  });

  it('trims the blanks around a key or a bearer token, so a pasted trailing space still matches', () => {
    expect(presentedCredentials({ 'x-api-key': ' k1 \t' })).toStrictEqual(['k1']);
    expect(presentedCredentials({ authorization: 'Bearer t1 \t ' })).toStrictEqual(['t1']);
    expect(createProxyAuth('s3cret-token')({ authorization: 'Bearer s3cret-token ' })).toBe(true);
  });

  it('finds no bearer token in a Bearer scheme followed by blanks only', () => {
    expect(presentedCredentials({ authorization: 'Bearer  \t ' })).toStrictEqual([]);
  });

  it('reads the first value of a header sent twice', () => {
    expect(
      presentedCredentials({ 'x-api-key': ['k1', 'k2'], authorization: ['Bearer t1', 'Bearer t2'] }),
    ).toStrictEqual(['k1', 't1']);
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
