/**
 * Where the attempts of one routed exchange go: the route's first target whose breaker admits it, then —
 * only after an attempt that failed before anything reached the caller, in a way fallback covers — the
 * next such target. Each attempt's outcome is the verdict for its upstream's breaker.
 *
 * Fallback covers what says the upstream is away or overloaded: a connect or socket failure, 429, a 5xx
 * (529 included), and the connect or first-byte deadline. Anything else (a 400, a 401, a broken answer)
 * is the same wherever it goes, so it stays on its upstream and the usual retry rules apply.
 *
 * @module
 */
import { TransportError, isTransportError } from '../../errors.js';
import type { AttemptNotes } from '../../providers/attempt-notes.js';
import type { AttemptRouting } from '../run-attempts.js';
import type { RoutedTarget } from './create-router.js';

/** Whether `error` is one fallback covers, and one that counts against the upstream's breaker. */
export function isUpstreamFailure(error: unknown): boolean {
  if (!isTransportError(error)) return false;
  switch (error.code) {
    case 'MODEL_ETRANSPORT':
      return true;
    case 'MODEL_EHTTP':
      return error.status === 429 || error.status >= 500;
    case 'MODEL_ETIMEOUT':
      return error.deadline === 'connect' || error.deadline === 'first-byte';
    // The same request would meet the same answer anywhere, or the caller went away.
    case 'MODEL_EABORTED':
    case 'MODEL_EAUTH':
    case 'MODEL_ECONFIG':
    case 'MODEL_EINVAL':
    case 'MODEL_EPAIRING':
    case 'MODEL_EPROTO':
    case 'MODEL_ETOOBIG':
      return false;
  }
}

/** Whether an attempt that ended with `error` says nothing about its upstream (the caller went away). */
function isWithoutVerdict(error: unknown): boolean {
  return (
    !isTransportError(error) ||
    error.code === 'MODEL_EABORTED' ||
    (error.code === 'MODEL_ETIMEOUT' && error.deadline === 'total')
  );
}

/** The answer when every target of the route is cooling down: 503, with when to come back. */
function coolingDown(targets: readonly RoutedTarget[]): TransportError {
  const waits = targets.map((target) => target.upstream.breaker.snapshot().retryInMs ?? 0);
  const seconds = Math.max(1, Math.ceil(Math.min(...waits) / 1000));
  const names = [...new Set(targets.map((target) => target.upstream.name))].join(', ');
  return new TransportError(
    'MODEL_EHTTP',
    `every upstream of this route is cooling down after repeated failures (${names}); try again in ${seconds} s`,
    { status: 503, type: 'overloaded_error', retryable: false, headers: { 'retry-after': String(seconds) } },
  );
}

/** The attempts of one routed exchange; see the module comment. */
export class RouteCursor implements AttemptRouting {
  readonly #targets: readonly RoutedTarget[];
  /** The target of the attempt in flight (or the last one), and where the next one goes. */
  #index = -1;
  #next = 0;
  /** Whether the attempt in flight still owes its upstream's breaker a verdict. */
  #owesVerdict = false;
  /** The 503 this cursor raised itself when every target was cooling down: it ends the exchange. */
  #coolingDown: TransportError | undefined;

  constructor(targets: readonly RoutedTarget[]) {
    this.#targets = targets;
  }

  /** The target of the attempt in flight, or of the last one. */
  get current(): RoutedTarget | undefined {
    return this.#targets[this.#index];
  }

  /**
   * Starts an attempt: on a new target, the first from the planned one on whose breaker admits it.
   * @throws TransportError 503 when none does
   */
  begin(notes: AttemptNotes | undefined): RoutedTarget {
    if (this.#next !== this.#index) {
      let chosen = -1;
      for (let index = this.#next; index < this.#targets.length; index++) {
        if (this.#targets[index]!.upstream.breaker.admit()) {
          chosen = index;
          break;
        }
      }
      if (chosen === -1) {
        this.#coolingDown = coolingDown(this.#targets.slice(this.#next));
        throw this.#coolingDown;
      }
      this.#index = chosen;
      this.#next = chosen;
    }
    this.#owesVerdict = true;
    const target = this.#targets[this.#index]!;
    if (notes !== undefined) notes.upstream = target.upstream.name;
    return target;
  }

  /** The attempt in flight reached its first byte, or ended with `error`: its breaker's verdict. */
  settle(error?: unknown): void {
    if (!this.#owesVerdict) return;
    this.#owesVerdict = false;
    const breaker = this.current!.upstream.breaker;
    if (error === undefined) breaker.succeeded();
    else if (isUpstreamFailure(error)) breaker.failed();
    else if (isWithoutVerdict(error)) breaker.released();
    // The upstream answered, if only to refuse this request: it is there.
    else breaker.succeeded();
  }

  afterFailure(error: TransportError): 'switched' | 'same' | 'stop' {
    if (error === this.#coolingDown) return 'stop';
    this.settle(error);
    if (!isUpstreamFailure(error)) return 'same';
    for (let index = this.#index + 1; index < this.#targets.length; index++) {
      const state = this.#targets[index]!.upstream.breaker.state;
      if (state !== 'open') {
        this.#next = index;
        return 'switched';
      }
    }
    return this.current!.upstream.breaker.state === 'open' ? 'stop' : 'same';
  }
}
