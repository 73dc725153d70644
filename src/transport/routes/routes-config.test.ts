import { describe, expect, it } from 'vitest';
import { isTransportError } from '../../errors.js';
import { resolveRoutesConfig } from './routes-config.js';

const LOCAL = { baseUrl: 'http://127.0.0.1:8080/v1', token: 'local', dialect: 'llamacpp' };
const CLOUD = { baseUrl: 'https://openrouter.ai/api/v1', tokenFile: '/home/me/or-token' };

function configError(value: unknown): string {
  try {
    resolveRoutesConfig(value, 'routes.json');
  } catch (error) {
    if (isTransportError(error) && error.code === 'MODEL_ECONFIG') return error.message;
    throw error;
  }
  throw new Error('the configuration was accepted');
}

describe('resolveRoutesConfig', () => {
  it('resolves upstreams, routes with their fallbacks, and the breaker defaults', () => {
    const resolved = resolveRoutesConfig(
      {
        upstreams: { local: LOCAL, cloud: CLOUD },
        routes: [
          { match: { model: '*haiku*' }, to: 'local:qwen3-4b' },
          { to: 'local:qwen3-32b', fallback: ['cloud:qwen/qwen3-32b', 'cloud'] },
        ],
      },
      'routes.json',
    );
    expect(resolved.breaker).toEqual({ failures: 3, coolDownMs: 30_000 });
    expect(resolved.upstreams.get('cloud')).toMatchObject({
      dialect: 'openrouter',
      dialectReason: 'detected from the host openrouter.ai',
      tokenSpec: { kind: 'file', origin: 'upstreams.cloud.tokenFile', path: '/home/me/or-token' },
    });
    expect(resolved.routes[1]!.targets).toEqual([
      { upstream: 'local', model: 'qwen3-32b', label: 'local:qwen3-32b' },
      { upstream: 'cloud', model: 'qwen/qwen3-32b', label: 'cloud:qwen/qwen3-32b' },
      { upstream: 'cloud', model: undefined, label: 'cloud' },
    ]);
    expect(resolved.routes[0]!.modelMatcher?.test('claude-HAIKU-4-5')).toBe(true);
  });

  it('names an unknown key with its path', () => {
    expect(configError({ upstreams: { local: { ...LOCAL, baseURL: 'x' } }, routes: [{ to: 'local' }] })).toBe(
      'routes.json: unknown key upstreams.local.baseURL',
    );
    expect(
      configError({ upstreams: { local: LOCAL }, routes: [{ to: 'local', match: { modle: 'x' } }] }),
    ).toContain('unknown key routes[0].match.modle');
    expect(configError({ upstreams: { local: LOCAL }, routes: [{ to: 'local' }], retries: 2 })).toContain(
      'unknown key retries',
    );
  });

  it('names a route to an unknown upstream', () => {
    expect(
      configError({ upstreams: { local: LOCAL }, routes: [{ to: 'local:a', fallback: ['cloud:b'] }] }),
    ).toContain(
      'routes[0].fallback[0] names the upstream "cloud", which is not under "upstreams" (known: local)',
    );
  });

  it('refuses a fallback cycle', () => {
    expect(
      configError({
        upstreams: { local: LOCAL, cloud: CLOUD },
        routes: [{ to: 'local:a', fallback: ['cloud:b', 'local:a'] }],
      }),
    ).toContain('routes[0].fallback[1] falls back to local:a, which is already in this route');
  });

  it('refuses two token sources, and none, naming the keys', () => {
    expect(
      configError({ upstreams: { local: { ...LOCAL, tokenFile: '/t' } }, routes: [{ to: 'local' }] }),
    ).toContain('two token sources (upstreams.local.token, upstreams.local.tokenFile)');
    const { token: _token, ...tokenless } = LOCAL;
    expect(configError({ upstreams: { local: tokenless }, routes: [{ to: 'local' }] })).toContain(
      'upstreams.local has no token source',
    );
  });

  it('wants a last route without match, and no unconditional route before it', () => {
    expect(
      configError({ upstreams: { local: LOCAL }, routes: [{ match: { hasImage: true }, to: 'local' }] }),
    ).toContain('routes[0].match: the last route must have no match');
    expect(
      configError({ upstreams: { local: LOCAL }, routes: [{ to: 'local' }, { to: 'local:b' }] }),
    ).toContain('routes[0] has no match, so the routes after it could never be chosen');
  });

  it('names a bad value: a dialect, a URL, a count', () => {
    expect(
      configError({ upstreams: { local: { ...LOCAL, dialect: 'llama' } }, routes: [{ to: 'local' }] }),
    ).toContain('upstreams.local.dialect: must be one of openai, vllm, llamacpp');
    expect(
      configError({
        upstreams: { local: { ...LOCAL, baseUrl: 'localhost:8080' } },
        routes: [{ to: 'local' }],
      }),
    ).toContain('upstreams.local.baseUrl must be an http:// or https:// URL');
    expect(
      configError({ upstreams: { local: LOCAL }, routes: [{ to: 'local' }], breaker: { failures: 0 } }),
    ).toContain('breaker.failures');
  });
});
