import { describe, expect, it, vi } from 'vitest';
import { TransportError } from '../errors.js';
import { observeTokenRefresh, startAttempt, type AttemptEnd } from './observer.js';
import type { TokenSource } from './token-source.js';

function clock(...times: number[]): () => number {
  return () => times.shift() ?? Number.NaN;
}

describe('startAttempt', () => {
  it('costs nothing without an observer', () => {
    expect(startAttempt(undefined, 1, 'tpx', 'm')).toBeUndefined();
  });

  it('reports the attempt once, with its number, provider, status, error, model and duration', () => {
    const ends: AttemptEnd[] = [];
    const starts: unknown[] = [];
    const attempt = startAttempt(
      {
        onAttemptStart: (start) => {
          starts.push(start);
          return { traceparent: 'tp' };
        },
        onAttemptEnd: (end) => ends.push(end),
      },
      2,
      'anthropic',
      'fallback-model',
      clock(100, 142.5, 999),
    )!;
    expect(starts).toStrictEqual([{ number: 2, provider: 'anthropic' }]);
    expect(attempt.notes).toStrictEqual({ headers: { traceparent: 'tp' } });
    expect(attempt.isEnded).toBe(false);
    attempt.notes.upstreamModel = 'noted-model';
    const error = new TransportError('MODEL_EHTTP', 'boom', { status: 500 });
    attempt.end(500, error);
    attempt.end(200);
    expect(attempt.isEnded).toBe(true);
    expect(ends).toStrictEqual([
      {
        number: 2,
        provider: 'anthropic',
        durationMs: 42.5,
        status: 500,
        error,
        upstreamModel: 'noted-model',
      },
    ]);
  });

  it('leaves out a status of 0, a missing error and a missing model, and falls back to the given model', () => {
    const ends: AttemptEnd[] = [];
    startAttempt({ onAttemptEnd: (end) => ends.push(end) }, 1, 'tpx', undefined, clock(5, 6))!.end(0);
    const withFallback = startAttempt(
      { onAttemptEnd: (end) => ends.push(end) },
      1,
      'tpx',
      'asked',
      clock(0, 1),
    )!;
    expect(withFallback.notes).toStrictEqual({});
    withFallback.end(200);
    expect(ends).toStrictEqual([
      { number: 1, provider: 'tpx', durationMs: 1 },
      { number: 1, provider: 'tpx', durationMs: 1, status: 200, upstreamModel: 'asked' },
    ]);
  });

  it('adds no headers when the start hook returns none, and survives hooks that throw', () => {
    const attempt = startAttempt(
      {
        onAttemptStart: () => {
          throw new Error('observer bug');
        },
        onAttemptEnd: () => {
          throw new Error('observer bug');
        },
      },
      1,
      'tpx',
      'm',
    )!;
    expect(attempt.notes).toStrictEqual({});
    expect(() => attempt.end(200)).not.toThrow();
    expect(attempt.isEnded).toBe(true);
    const nullHeaders = startAttempt({ onAttemptStart: () => null as unknown as undefined }, 1, 'tpx', 'm')!;
    expect(nullHeaders.notes).toStrictEqual({});
  });
});

function fakeTokens(refresh: TokenSource['refresh']): TokenSource {
  return {
    kind: 'command',
    origin: 'TPX_OAUTH_TOKEN_COMMAND',
    token: () => Promise.resolve('tok-current'),
    refresh,
    redact: (text) => text.replaceAll('secret', '[redacted]'),
  };
}

describe('observeTokenRefresh', () => {
  it('hands back the source itself when nobody watches refreshes', () => {
    const tokens = fakeTokens(() => Promise.resolve(undefined));
    expect(observeTokenRefresh(tokens, undefined)).toBe(tokens);
    expect(observeTokenRefresh(tokens, {})).toBe(tokens);
  });

  it('reports refreshed, unchanged and failed refreshes with the source kind, passing everything else on', async () => {
    const outcomes: unknown[] = [];
    const answers: (string | undefined | Error)[] = ['tok-new', undefined, new Error('command failed')];
    const inner = vi.fn(() => {
      const answer = answers.shift();
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    });
    const observed = observeTokenRefresh(fakeTokens(inner), {
      onTokenRefresh: (event) => outcomes.push(event),
    });
    expect(observed.kind).toBe('command');
    expect(observed.origin).toBe('TPX_OAUTH_TOKEN_COMMAND');
    await expect(observed.token({})).resolves.toBe('tok-current');
    expect(observed.redact('a secret')).toBe('a [redacted]');
    const exchange = {};
    const signal = new AbortController().signal;
    await expect(observed.refresh(exchange, 'tok-old', signal)).resolves.toBe('tok-new');
    expect(inner).toHaveBeenLastCalledWith(exchange, 'tok-old', signal);
    await expect(observed.refresh(exchange, 'tok-old')).resolves.toBeUndefined();
    await expect(observed.refresh(exchange, 'tok-old')).rejects.toThrow('command failed');
    expect(outcomes).toStrictEqual([
      { source: 'command', outcome: 'refreshed' },
      { source: 'command', outcome: 'unchanged' },
      { source: 'command', outcome: 'failed' },
    ]);
  });

  it('keeps a refresh going when the observer throws', async () => {
    const observed = observeTokenRefresh(
      fakeTokens(() => Promise.resolve('tok-new')),
      {
        onTokenRefresh: () => {
          throw new Error('observer bug');
        },
      },
    );
    await expect(observed.refresh({}, 'x')).resolves.toBe('tok-new');
  });
});
