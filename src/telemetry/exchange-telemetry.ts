/**
 * The proxy's telemetry seam: what metrics and traces are told about each exchange. The handler asks
 * for one {@link ExchangeTelemetry} when an exchange starts, hands its `observer` to the transport (so
 * upstream attempts are seen too), says when a stream opens, and reports the outcome once at the end.
 * The Prometheus metrics (`metrics.ts`) and the OpenTelemetry spans and GenAI histograms
 * (`genai-telemetry.ts`) are two implementations; {@link combineTelemetry} runs several as one.
 *
 * @module
 */
import type { ProviderName, TransportErrorCode } from '../errors.js';
import type { AttemptEnd, AttemptStart, ExchangeObserver } from '../providers/observer.js';

/** Token usage as a Messages response reports it. */
export interface ExchangeUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

/** An upstream attempt that failed and was retried, as the log and the span tell it. */
export interface RetryRecord {
  /** The attempt that failed: 1 for the first. */
  attempt: number;
  /** Its error's code. */
  error: TransportErrorCode;
  /** The upstream's status, when it answered with an error status. */
  status?: number;
  /** The deadline that passed, for a timeout: `connect`, `first-byte`, `idle` or `total`. */
  deadline?: string;
  /** The error's message: what happened, in words. */
  reason: string;
  /** The wait before the next attempt, in milliseconds. */
  delayMs: number;
}

/** What telemetry reads of an exchange's log record (the server's `ExchangeRecord` is one). */
export interface ExchangeSummary {
  requestId: string;
  method: string;
  path: string;
  provider: ProviderName;
  status: number;
  durationMs: number;
  /** The model the client asked for. */
  model?: string;
  stream?: boolean;
  usage?: ExchangeUsage;
  /** The error's code, when the exchange failed (also after a stream started). */
  error?: TransportErrorCode;
  errorMessage?: string;
  /** The attempts that failed and were retried, each with why. */
  retries?: readonly RetryRecord[];
}

/** How an exchange ended, as telemetry sees it. */
export interface ExchangeOutcome {
  /** The exchange's log record: route, status, duration, model, stream flag, usage, error code. */
  record: Readonly<ExchangeSummary>;
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
 * The exchange telemetry of several parts as one: each call goes to every part in order, and the
 * headers the parts' observers return for an attempt are merged, an earlier part's winning.
 */
class CombinedExchange implements ExchangeTelemetry, ExchangeObserver {
  /** None when no part observes attempts, the part's own when only one does, else this object. */
  declare readonly observer?: ExchangeObserver;
  readonly #parts: readonly ExchangeTelemetry[];

  constructor(parts: readonly ExchangeTelemetry[]) {
    this.#parts = parts;
    const observers = parts.filter((part) => part.observer !== undefined);
    if (observers.length > 1) this.observer = this;
    else if (observers.length === 1) this.observer = observers[0]!.observer!;
  }

  onAttemptStart(attempt: AttemptStart): Readonly<Record<string, string>> | undefined {
    let headers: Readonly<Record<string, string>> | undefined;
    for (const part of this.#parts) {
      // An observer written in JavaScript may answer null: that adds nothing either.
      const added = part.observer?.onAttemptStart?.(attempt) ?? undefined;
      if (added !== undefined) headers = headers === undefined ? added : { ...added, ...headers };
    }
    return headers;
  }

  onAttemptEnd(attempt: AttemptEnd): void {
    for (const part of this.#parts) part.observer?.onAttemptEnd?.(attempt);
  }

  streamOpened(): void {
    for (const part of this.#parts) part.streamOpened();
  }

  end(outcome: ExchangeOutcome): void {
    for (const part of this.#parts) part.end(outcome);
  }
}

/** One telemetry made of several (`undefined` when there are none, the one itself when there is one). */
export function combineTelemetry(...parts: readonly (Telemetry | undefined)[]): Telemetry | undefined {
  const present = parts.filter((part): part is Telemetry => part !== undefined);
  if (present.length <= 1) return present[0];
  return {
    startExchange: (start) => new CombinedExchange(present.map((part) => part.startExchange(start))),
  };
}
