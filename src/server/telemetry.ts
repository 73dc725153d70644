/**
 * The proxy's telemetry seam: what metrics and traces are told about each exchange. The handler asks
 * for one {@link ExchangeTelemetry} when an exchange starts, hands its `observer` to the transport (so
 * upstream attempts are seen too), says when a stream opens, and reports the outcome once at the end.
 * Metrics (`metrics.ts`) and traces (`tracing.ts`) are two implementations; {@link combineTelemetry}
 * runs several as one. Without telemetry an exchange does none of this work.
 *
 * @module
 */
import type { AttemptEnd, AttemptStart, ExchangeObserver } from '../providers/observer.js';
import type { ExchangeRecord } from './logger.js';

/** How an exchange ended, as telemetry sees it. */
export interface ExchangeOutcome {
  /** The exchange's log record: route, status, duration, model, stream flag, usage, error code. */
  record: Readonly<ExchangeRecord>;
  /** The message's `stop_reason`, when one was delivered. */
  stopReason?: string;
  /** From the start of the exchange to the moment its answer could start going out, in milliseconds. */
  timeToFirstByteMs?: number;
}

/** What telemetry needs to know about the exchange when it starts. */
export interface ExchangeStart {
  method: string;
  /** The request path without its query string. */
  path: string;
  /** The request headers (for an incoming `traceparent`). */
  headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** Telemetry for one exchange. */
export interface ExchangeTelemetry {
  /** Passed to the transport, to see each upstream attempt. */
  readonly observer?: ExchangeObserver;
  /** A streamed answer has started (its headers are going out). */
  streamOpened(): void;
  /** The exchange is over; called exactly once. */
  end(outcome: ExchangeOutcome): void;
}

/** A source of per-exchange telemetry. */
export interface Telemetry {
  startExchange(start: ExchangeStart): ExchangeTelemetry;
}

/**
 * The exchange telemetry of several parts as one. One object per exchange that is also the combined
 * observer (no closures or intermediate arrays per exchange): each call goes to every part in order,
 * and the headers the parts' observers return for an attempt are merged, later ones beneath earlier ones.
 */
class CombinedExchange implements ExchangeTelemetry, ExchangeObserver {
  /** None when no part observes attempts, the part's own when only one does, else this object. */
  declare readonly observer?: ExchangeObserver;
  readonly #exchanges: readonly ExchangeTelemetry[];

  constructor(exchanges: readonly ExchangeTelemetry[]) {
    this.#exchanges = exchanges;
    let only: ExchangeObserver | undefined;
    for (const exchange of exchanges) {
      if (exchange.observer === undefined) continue;
      if (only !== undefined) {
        this.observer = this;
        return;
      }
      only = exchange.observer;
    }
    if (only !== undefined) this.observer = only;
  }

  onAttemptStart(attempt: AttemptStart): Readonly<Record<string, string>> | undefined {
    let headers: Readonly<Record<string, string>> | undefined;
    for (const exchange of this.#exchanges) {
      const more = exchange.observer?.onAttemptStart?.(attempt);
      if (more === undefined || more === null) continue;
      // Usually one part (tracing) has headers: they are passed on as they are, and copied only to merge.
      headers = headers === undefined ? more : { ...more, ...headers };
    }
    return headers;
  }

  onAttemptEnd(attempt: AttemptEnd): void {
    for (const exchange of this.#exchanges) exchange.observer?.onAttemptEnd?.(attempt);
  }

  streamOpened(): void {
    for (const exchange of this.#exchanges) exchange.streamOpened();
  }

  end(outcome: ExchangeOutcome): void {
    for (const exchange of this.#exchanges) exchange.end(outcome);
  }
}

/** One telemetry made of several (or `undefined` when there are none). */
export function combineTelemetry(...parts: readonly (Telemetry | undefined)[]): Telemetry | undefined {
  const present = parts.filter((part): part is Telemetry => part !== undefined);
  if (present.length <= 1) return present[0];
  return {
    startExchange(start) {
      const exchanges: ExchangeTelemetry[] = [];
      for (const part of present) exchanges.push(part.startExchange(start));
      return new CombinedExchange(exchanges);
    },
  };
}
