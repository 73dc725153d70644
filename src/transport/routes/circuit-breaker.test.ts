import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from './circuit-breaker.js';

function breakerAt(clock: { now: number }) {
  return new CircuitBreaker({ failures: 2, coolDownMs: 1_000 }, () => clock.now);
}

describe('CircuitBreaker', () => {
  it('opens after the configured consecutive failures, not before, and a success resets the count', () => {
    const clock = { now: 0 };
    const breaker = breakerAt(clock);
    breaker.failed();
    breaker.succeeded();
    breaker.failed();
    expect(breaker.snapshot()).toEqual({ state: 'closed', consecutiveFailures: 1 });
    breaker.failed();
    expect(breaker.snapshot()).toEqual({ state: 'open', consecutiveFailures: 2, retryInMs: 1_000 });
    expect(breaker.admit()).toBe(false);
  });

  it('admits one probe after the cool-down, and closes when it succeeds', () => {
    const clock = { now: 0 };
    const breaker = breakerAt(clock);
    breaker.failed();
    breaker.failed();
    clock.now = 1_000;
    expect(breaker.state).toBe('half-open');
    expect([breaker.admit(), breaker.admit()]).toEqual([true, false]);
    breaker.succeeded();
    expect(breaker.snapshot()).toEqual({ state: 'closed', consecutiveFailures: 0 });
  });

  it('opens for another cool-down when the probe fails, and frees the probe when it ends without a verdict', () => {
    const clock = { now: 0 };
    const breaker = breakerAt(clock);
    breaker.failed();
    breaker.failed();
    clock.now = 1_000;
    expect(breaker.admit()).toBe(true);
    breaker.released();
    expect(breaker.admit()).toBe(true);
    breaker.failed();
    expect(breaker.snapshot()).toEqual({ state: 'open', consecutiveFailures: 3, retryInMs: 1_000 });
    clock.now = 1_999;
    expect(breaker.admit()).toBe(false);
  });
});
