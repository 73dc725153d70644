/**
 * Keep-alive pings on their own: when a promise counts as settled within an interval, and when a
 * streamed response gets a ping (only after a whole interval with nothing written, never on a response
 * that is gone, ended or full).
 */
import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { vi } from 'vitest';
import {
  DEFAULT_PING_INTERVAL_MS,
  PING_FRAME,
  settlesWithin,
  startPinger,
} from '../../src/server/keep-alive.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('settlesWithin', () => {
  it('is true for a promise that resolves or rejects in time, false for one still pending', async () => {
    const resolved = settlesWithin(Promise.resolve(1), 100);
    const rejected = settlesWithin(Promise.reject(new Error('x')), 100);
    let settle: (value: unknown) => void = () => undefined;
    const late = settlesWithin(new Promise((resolve) => (settle = resolve)), 100);
    await vi.advanceTimersByTimeAsync(99);
    await expect(resolved).resolves.toBe(true);
    await expect(rejected).resolves.toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    settle(undefined);
    await expect(late).resolves.toBe(false);
  });

  it('leaves no timer behind once the promise settled', async () => {
    await settlesWithin(Promise.resolve(), 10_000);
    expect(vi.getTimerCount()).toBe(0);
  });
});

/** The parts of a response the pinger reads, with what it wrote. */
function fakeResponse() {
  const written: string[] = [];
  const response = {
    destroyed: false,
    writableEnded: false,
    writableNeedDrain: false,
    write(text: string) {
      written.push(text);
      return true;
    },
  };
  return { response, written, asResponse: response as unknown as ServerResponse };
}

describe('startPinger', () => {
  it('pings Anthropic-style after a whole silent interval, and again every interval of silence', () => {
    expect(PING_FRAME).toBe('event: ping\ndata: {"type": "ping"}\n\n');
    expect(DEFAULT_PING_INTERVAL_MS).toBe(15_000);
    const { written, asResponse } = fakeResponse();
    const pinger = startPinger(asResponse, 100);
    // The headers just went out: the first interval counts as written.
    vi.advanceTimersByTime(100);
    expect(written).toStrictEqual([]);
    vi.advanceTimersByTime(100);
    expect(written).toStrictEqual([PING_FRAME]);
    vi.advanceTimersByTime(100);
    expect(written).toStrictEqual([PING_FRAME, PING_FRAME]);
    pinger.stop();
    vi.advanceTimersByTime(1_000);
    expect(written).toHaveLength(2);
  });

  it('skips the ping of an interval in which something was written', () => {
    const { written, asResponse } = fakeResponse();
    const pinger = startPinger(asResponse, 100);
    vi.advanceTimersByTime(150);
    pinger.wrote();
    vi.advanceTimersByTime(50);
    expect(written).toStrictEqual([]);
    vi.advanceTimersByTime(100);
    expect(written).toStrictEqual([PING_FRAME]);
    pinger.stop();
  });

  it.each(['destroyed', 'writableEnded', 'writableNeedDrain'] as const)(
    'writes no ping while the response is %s',
    (state) => {
      const { response, written, asResponse } = fakeResponse();
      const pinger = startPinger(asResponse, 100);
      response[state] = true;
      vi.advanceTimersByTime(500);
      expect(written).toStrictEqual([]);
      response[state] = false;
      vi.advanceTimersByTime(100);
      expect(written).toStrictEqual([PING_FRAME]);
      pinger.stop();
    },
  );

  it('does not keep the process alive', () => {
    const { asResponse } = fakeResponse();
    const spy = vi.spyOn(globalThis, 'setInterval');
    const pinger = startPinger(asResponse, 100);
    const timer = spy.mock.results[0]?.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    pinger.stop();
    spy.mockRestore();
  });
});
