import { describe, expect, it } from 'vitest';
import { DIALECTS } from './dialects.js';
import { cacheControlOf, forwardsCacheControl } from './map-cache-control.js';

describe('forwardsCacheControl', () => {
  it('forwards cache_control to OpenRouter only', () => {
    expect(forwardsCacheControl(DIALECTS.openrouter)).toBe(true);
    expect(forwardsCacheControl(DIALECTS.openai)).toBe(false);
    expect(forwardsCacheControl(DIALECTS['openai-generic'])).toBe(false);
    expect(forwardsCacheControl(undefined)).toBe(false);
  });
});

describe('cacheControlOf', () => {
  it('keeps an ephemeral marker with a 5m or 1h ttl', () => {
    expect(cacheControlOf({ cache_control: { type: 'ephemeral', ttl: '5m' } })).toStrictEqual({
      type: 'ephemeral',
      ttl: '5m',
    });
    expect(cacheControlOf({ cache_control: { type: 'ephemeral', ttl: '1h' } })).toStrictEqual({
      type: 'ephemeral',
      ttl: '1h',
    });
  });

  it('drops any other ttl but keeps the marker', () => {
    expect(cacheControlOf({ cache_control: { type: 'ephemeral', ttl: '2h' } })).toStrictEqual({
      type: 'ephemeral',
    });
    expect(cacheControlOf({ cache_control: { type: 'ephemeral' } })).toStrictEqual({ type: 'ephemeral' });
  });

  it('gives undefined for a marker of another type, a missing or null marker, or a holder that is not an object', () => {
    expect(cacheControlOf({ cache_control: { type: 'persistent', ttl: '5m' } })).toBeUndefined();
    expect(cacheControlOf({ cache_control: 'ephemeral' })).toBeUndefined();
    expect(cacheControlOf({ cache_control: null })).toBeUndefined();
    expect(cacheControlOf({})).toBeUndefined();
    expect(cacheControlOf(null)).toBeUndefined();
    expect(cacheControlOf(undefined)).toBeUndefined();
    expect(cacheControlOf('cache_control')).toBeUndefined();
  });
});
