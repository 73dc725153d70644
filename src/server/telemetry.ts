/**
 * The proxy's telemetry seam: what metrics and traces are told about each exchange. The handler asks
 * for one {@link ExchangeTelemetry} when an exchange starts, hands its `observer` to the transport (so
 * upstream attempts are seen too), says when a stream opens, and reports the outcome once at the end.
 * Metrics (`metrics.ts`) and traces (`tracing.ts`) are two implementations; {@link combineTelemetry}
 * runs several as one. Without telemetry an exchange does none of this work.
 *
 * @module
 */
import type { ExchangeObserver } from '../providers/observer.js';
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

/** Runs the observers in order; the headers they return are merged, later ones beneath earlier ones. */
function combineObservers(observers: readonly ExchangeObserver[]): ExchangeObserver | undefined {
  if (observers.length <= 1) return observers[0];
  return {
    onAttemptStart(attempt) {
      let headers: Record<string, string> | undefined;
      for (const observer of observers) {
        const more = observer.onAttemptStart?.(attempt);
        if (more !== undefined && more !== null) headers = { ...more, ...headers };
      }
      return headers;
    },
    onAttemptEnd(attempt) {
      for (const observer of observers) observer.onAttemptEnd?.(attempt);
    },
  };
}

/** One telemetry made of several (or `undefined` when there are none). */
export function combineTelemetry(...parts: readonly (Telemetry | undefined)[]): Telemetry | undefined {
  const present = parts.filter((part): part is Telemetry => part !== undefined);
  if (present.length <= 1) return present[0];
  return {
    startExchange(start) {
      const exchanges = present.map((part) => part.startExchange(start));
      const observers = exchanges.flatMap((exchange) =>
        exchange.observer === undefined ? [] : [exchange.observer],
      );
      const observer = combineObservers(observers);
      return {
        ...(observer === undefined ? {} : { observer }),
        streamOpened() {
          for (const exchange of exchanges) exchange.streamOpened();
        },
        end(outcome) {
          for (const exchange of exchanges) exchange.end(outcome);
        },
      };
    },
  };
}
