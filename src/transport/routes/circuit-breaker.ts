/**
 * A circuit breaker per upstream: after `failures` consecutive failed attempts it opens and the upstream
 * is skipped for `coolDownMs`; then it is half-open and admits one attempt, the probe, at a time. A probe
 * that succeeds closes it; one that fails opens it for another cool-down.
 *
 * ```text
 * closed ──(failures in a row)──▶ open ──(coolDownMs)──▶ half-open ──probe ok──▶ closed
 *                                  ▲                          │
 *                                  └────────probe fails───────┘
 * ```
 *
 * An attempt's verdict is given when its first byte arrives (success) or when it fails before that; an
 * attempt that ends with neither (the caller went away) only gives its probe slot back. Hand-written
 * rather than a resilience library's policy: those wrap one promise, and here the verdict comes from
 * the middle of a streamed attempt, not from its end.
 *
 * @module
 */

/** The breaker's state, as metrics, `/readyz` and the banner show it. */
export type BreakerState = 'closed' | 'open' | 'half-open';

/** What the breaker is set to. */
export interface BreakerSettings {
  /** Consecutive failures that open it. */
  readonly failures: number;
  /** How long it stays open before a probe, in milliseconds. */
  readonly coolDownMs: number;
}

/** A breaker's state at one moment. */
export interface BreakerSnapshot {
  readonly state: BreakerState;
  /** Failures since the last success. */
  readonly consecutiveFailures: number;
  /** How long until a probe may go, while open. */
  readonly retryInMs?: number;
}

/** One upstream's breaker. */
export class CircuitBreaker {
  readonly #settings: BreakerSettings;
  readonly #now: () => number;
  #failures = 0;
  #openUntil: number | undefined;
  #probing = false;

  constructor(settings: BreakerSettings, now: () => number = Date.now) {
    this.#settings = settings;
    this.#now = now;
  }

  get state(): BreakerState {
    if (this.#openUntil === undefined) return 'closed';
    return this.#now() < this.#openUntil ? 'open' : 'half-open';
  }

  /** Whether an attempt may go to the upstream now; in half-open, true for the one probe only. */
  admit(): boolean {
    switch (this.state) {
      case 'closed':
        return true;
      case 'open':
        return false;
      case 'half-open':
        if (this.#probing) return false;
        this.#probing = true;
        return true;
    }
  }

  /** An attempt reached its first byte (or the upstream answered something other than a failure). */
  succeeded(): void {
    this.#failures = 0;
    this.#openUntil = undefined;
    this.#probing = false;
  }

  /** An attempt failed in a way that counts against the upstream. */
  failed(): void {
    this.#failures += 1;
    if (this.#probing || this.#failures >= this.#settings.failures) {
      this.#openUntil = this.#now() + this.#settings.coolDownMs;
    }
    this.#probing = false;
  }

  /** An attempt ended without a verdict (the caller cancelled): its probe slot, if any, is free again. */
  released(): void {
    this.#probing = false;
  }

  snapshot(): BreakerSnapshot {
    const state = this.state;
    const base = { state, consecutiveFailures: this.#failures };
    return state === 'open' ? { ...base, retryInMs: Math.max(0, this.#openUntil! - this.#now()) } : base;
  }
}
