/**
 * Request targets in every form a client sends them (RFC 9112 §3.2): what the router sees as path and
 * query, and which authority the host check reads.
 */
import { describe, expect, it } from 'vitest';
import { splitTarget } from '../../src/server/exchange.js';
import { parseRequestTarget } from '../../src/server/request-target.js';

describe('parseRequestTarget', () => {
  it.each([
    ['/v1/messages', { path: '/v1/messages', query: '', authority: undefined }],
    ['/v1/messages?beta=true&x=1', { path: '/v1/messages', query: 'beta=true&x=1', authority: undefined }],
    ['/v1/messages?', { path: '/v1/messages', query: '', authority: undefined }],
    ['/v1/messages#frag?x=1', { path: '/v1/messages', query: '', authority: undefined }],
    ['/v1/messages?a=1#frag', { path: '/v1/messages', query: 'a=1', authority: undefined }],
    ['*', { path: '*', query: '', authority: undefined }],
    [
      'http://127.0.0.1:8787/v1/messages?beta=true',
      { path: '/v1/messages', query: 'beta=true', authority: '127.0.0.1:8787' },
    ],
    ['HTTPS://Example.com/x', { path: '/x', query: '', authority: 'Example.com' }],
    ['http://localhost', { path: '/', query: '', authority: 'localhost' }],
    ['http://localhost?x=1', { path: '/', query: 'x=1', authority: 'localhost' }],
    ['http://localhost#top', { path: '/', query: '', authority: 'localhost' }],
    ['http://[::1]:80/a/b', { path: '/a/b', query: '', authority: '[::1]:80' }],
    ['web+tpx.x-1://h/p', { path: '/p', query: '', authority: 'h' }],
    ['1http://h/p', { path: '1http://h/p', query: '', authority: undefined }],
    ['http:/h/p', { path: 'http:/h/p', query: '', authority: undefined }],
    ['xhttp://h/p', { path: '/p', query: '', authority: 'h' }],
  ])('splits %j', (target, expected) => {
    expect(parseRequestTarget(target)).toStrictEqual(expected);
  });
});

describe('splitTarget', () => {
  it('splits origin-form and absolute-form targets alike', () => {
    expect(splitTarget('/v1/models?limit=5')).toStrictEqual({ path: '/v1/models', query: 'limit=5' });
    expect(splitTarget('/v1/models')).toStrictEqual({ path: '/v1/models', query: '' });
    expect(splitTarget('/a?b?c')).toStrictEqual({ path: '/a', query: 'b?c' });
    expect(splitTarget('http://127.0.0.1:1/v1/models?limit=5')).toStrictEqual({
      path: '/v1/models',
      query: 'limit=5',
    });
  });

  it('leaves a #fragment out of the path and the query, as the router would never match it', () => {
    expect(splitTarget('/v1/models#frag?limit=5')).toStrictEqual({ path: '/v1/models', query: '' });
    expect(splitTarget('/v1/models?limit=5#top')).toStrictEqual({ path: '/v1/models', query: 'limit=5' });
    expect(splitTarget('http://127.0.0.1:1/v1/models#top')).toStrictEqual({ path: '/v1/models', query: '' });
  });
});
