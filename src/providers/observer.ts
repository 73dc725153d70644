/**
 * The transport's observer hook: a small, optional, typed way for the layer above (the proxy's metrics
 * and traces) to see each upstream attempt and each token refresh, without the transport knowing what
 * a metric or a span is.
 *
 * ```ts
 * await transport.send(request, {
 *   observer: {
 *     onAttemptStart: (attempt) => ({ traceparent: '00-…' }), // headers for that attempt's request
 *     onAttemptEnd: (attempt) => console.log(attempt.number, attempt.status, attempt.error?.code),
 *   },
 * });
 * ```
 *
 * An observer that throws is a bug in the observer; it is caught here so that it can never fail an
 * exchange.
 *
 * @module
 */
import type { ProviderName, TransportError } from '../errors.js';
import type { AttemptNotes } from './attempt-notes.js';
import type { TokenSource, TokenSourceKind } from './token-source.js';
import type { ToolRepair } from '../translate/read-tool-input.js';

/** An upstream attempt about to be sent. */
export interface AttemptStart {
  /** 1 for the first attempt, 2 for the first retry, … */
  number: number;
  provider: ProviderName;
}

/** An upstream attempt that ended: answered (a status), failed (an error), or both. */
export interface AttemptEnd extends AttemptStart {
  /** The upstream's HTTP status, when it answered one. */
  status?: number;
  /** Why the attempt failed; absent for an attempt that delivered its answer. */
  error?: TransportError;
  /** The model named in the upstream request, when the attempt got that far. */
  upstreamModel?: string;
  /** The answer's tool calls that were repaired, fitted to their schema or read from text. */
  repairs?: readonly ToolRepair[];
  /** The named upstream the attempt went to, when routes pick among several (`--config`). */
  upstream?: string;
  /** From the start of the attempt to its end (for a stream: its last event), in milliseconds. */
  durationMs: number;
}

/** Watches the upstream attempts of one exchange (`ExchangeOptions.observer`). */
export interface ExchangeObserver {
  /**
   * Called before each attempt is sent. May return headers to add to that attempt's request (a W3C
   * `traceparent`, say); they never replace the provider's own headers.
   */
  onAttemptStart?(attempt: AttemptStart): Readonly<Record<string, string>> | undefined | void;
  /** Called once when the attempt ended, whatever the way. */
  onAttemptEnd?(attempt: AttemptEnd): void;
  /**
   * Called with each request body the attempt sends upstream, exactly as sent (a debugging aid: bodies
   * hold whole conversations; credentials travel in headers, never here).
   */
  onAttemptBody?(attempt: AttemptStart, body: string): void;
}

/** A token refresh after the upstream refused a token with 401. */
export interface TokenRefresh {
  /** Where the token comes from. */
  source: TokenSourceKind;
  /** `refreshed`: a new token to retry with; `unchanged`: nothing new; `failed`: the refresh itself failed. */
  outcome: 'refreshed' | 'unchanged' | 'failed';
}

/** Watches the transport as a whole (`TransportOptions.observer`). */
export interface TransportObserver {
  /** Called after each token refresh attempt (`tpx` provider with a token file or command). */
  onTokenRefresh?(refresh: TokenRefresh): void;
}

function quietly(call: () => void): void {
  try {
    call();
  } catch {
    // An observer's failure must not become the exchange's: see the module comment.
  }
}

/** One observed attempt; {@link startAttempt} makes it. `end` is idempotent. */
export interface ObservedAttempt {
  readonly notes: AttemptNotes;
  /** Whether `end` was called. */
  readonly isEnded: boolean;
  end(status: number, error?: TransportError): void;
}

/**
 * One attempt being observed. A class rather than closures and a getter object: it runs for every
 * observed attempt, and one object with plain fields is all it takes.
 */
class ObservedAttemptRecord implements ObservedAttempt {
  readonly notes: AttemptNotes = {};
  isEnded = false;
  readonly #observer: ExchangeObserver;
  readonly #number: number;
  readonly #provider: ProviderName;
  readonly #fallbackModel: string | undefined;
  readonly #now: () => number;
  readonly #startedMs: number;

  constructor(
    observer: ExchangeObserver,
    number: number,
    provider: ProviderName,
    fallbackModel: string | undefined,
    now: () => number,
  ) {
    this.#observer = observer;
    this.#number = number;
    this.#provider = provider;
    this.#fallbackModel = fallbackModel;
    this.#now = now;
    this.#startedMs = now();
    try {
      const headers = observer.onAttemptStart?.({ number, provider });
      if (headers !== undefined && headers !== null) this.notes.headers = headers;
    } catch {
      // An observer's failure must not become the exchange's: see the module comment.
    }
    if (observer.onAttemptBody !== undefined) {
      this.notes.sendsBody = (body) => quietly(() => observer.onAttemptBody?.({ number, provider }, body));
    }
  }

  end(status: number, error?: TransportError): void {
    if (this.isEnded) return;
    this.isEnded = true;
    const event: AttemptEnd = {
      number: this.#number,
      provider: this.#provider,
      durationMs: this.#now() - this.#startedMs,
    };
    if (status !== 0) event.status = status;
    if (error !== undefined) event.error = error;
    const model = this.notes.upstreamModel ?? this.#fallbackModel;
    if (model !== undefined) event.upstreamModel = model;
    if (this.notes.repairs !== undefined) event.repairs = this.notes.repairs;
    if (this.notes.upstream !== undefined) event.upstream = this.notes.upstream;
    try {
      this.#observer.onAttemptEnd?.(event);
    } catch {
      // As above: an observer's failure is not the exchange's.
    }
  }
}

/** The process's monotonic clock in milliseconds (bound once, not per attempt). */
const performanceNow = performance.now.bind(performance);

/**
 * Starts observing one attempt, or returns `undefined` when no one observes it (the common case,
 * which then costs nothing).
 *
 * @param fallbackModel the model to report when the provider did not note one (a native request is
 * sent with its own `model`)
 */
export function startAttempt(
  observer: ExchangeObserver | undefined,
  number: number,
  provider: ProviderName,
  fallbackModel: string | undefined,
  now: () => number = performanceNow,
): ObservedAttempt | undefined {
  if (observer === undefined) return undefined;
  return new ObservedAttemptRecord(observer, number, provider, fallbackModel, now);
}

/** `tokens` with each refresh reported to `observer` (or `tokens` itself when there is no observer). */
export function observeTokenRefresh(
  tokens: TokenSource,
  observer: TransportObserver | undefined,
): TokenSource {
  if (observer?.onTokenRefresh === undefined) return tokens;
  const report = (outcome: TokenRefresh['outcome']) =>
    quietly(() => observer.onTokenRefresh?.({ source: tokens.kind, outcome }));
  return {
    kind: tokens.kind,
    origin: tokens.origin,
    token: (exchange) => tokens.token(exchange),
    redact: (text) => tokens.redact(text),
    async refresh(exchange, rejected, signal) {
      try {
        const fresh = await tokens.refresh(exchange, rejected, signal);
        report(fresh === undefined ? 'unchanged' : 'refreshed');
        return fresh;
      } catch (error) {
        report('failed');
        throw error;
      }
    },
  };
}
