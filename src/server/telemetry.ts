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
 * The headers two observers return for one attempt, as one: the first's win. Usually only one of them
 * (tracing) has any, and those are passed on as they are; they are copied only to be merged.
 */
function mergeAttemptHeaders(
  first: Readonly<Record<string, string>> | undefined | void | null,
  second: Readonly<Record<string, string>> | undefined | void | null,
): Readonly<Record<string, string>> | undefined {
  if (second === undefined || second === null) return first ?? undefined;
  if (first === undefined || first === null) return second;
  return { ...second, ...first };
}

/**
 * The exchange telemetry of two parts as one (metrics and traces, the proxy's case): one object per
 * exchange that is also the combined observer, calling each part through a field of its own, so that
 * each call site sees one kind of part and the calls stay direct.
 */
class PairedExchange implements ExchangeTelemetry, ExchangeObserver {
  /** None when neither part observes attempts, the part's own when only one does, else this object. */
  declare readonly observer?: ExchangeObserver;
  readonly #first: ExchangeTelemetry;
  readonly #second: ExchangeTelemetry;

  constructor(first: ExchangeTelemetry, second: ExchangeTelemetry) {
    this.#first = first;
    this.#second = second;
    const observers = first.observer === undefined ? second.observer : first.observer;
    if (first.observer !== undefined && second.observer !== undefined) this.observer = this;
    else if (observers !== undefined) this.observer = observers;
  }

  onAttemptStart(attempt: AttemptStart): Readonly<Record<string, string>> | undefined {
    return mergeAttemptHeaders(
      this.#first.observer!.onAttemptStart?.(attempt),
      this.#second.observer!.onAttemptStart?.(attempt),
    );
  }

  onAttemptEnd(attempt: AttemptEnd): void {
    this.#first.observer!.onAttemptEnd?.(attempt);
    this.#second.observer!.onAttemptEnd?.(attempt);
  }

  streamOpened(): void {
    this.#first.streamOpened();
    this.#second.streamOpened();
  }

  end(outcome: ExchangeOutcome): void {
    this.#first.end(outcome);
    this.#second.end(outcome);
  }
}

/**
 * The exchange telemetry of several parts as one, as {@link PairedExchange} for any number of parts:
 * each call goes to every part in order, and the headers the parts' observers return for an attempt
 * are merged, later ones beneath earlier ones.
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
      headers = mergeAttemptHeaders(headers, exchange.observer?.onAttemptStart?.(attempt));
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
  if (present.length === 2) {
    const [first, second] = present as [Telemetry, Telemetry];
    return {
      startExchange: (start) => new PairedExchange(first.startExchange(start), second.startExchange(start)),
    };
  }
  return {
    startExchange(start) {
      const exchanges: ExchangeTelemetry[] = [];
      for (const part of present) exchanges.push(part.startExchange(start));
      return new CombinedExchange(exchanges);
    },
  };
}
