/**
 * Runs the exchanges of one transport: each under its deadlines and retry budget (the transport's, with
 * the call's options over them), its attempts in the one attempt loop (`run-attempts.ts`), every request
 * through the transport's connection pools. Closing it ends them.
 *
 * @module
 */
import { setTimeout as delay } from 'node:timers/promises';
import { TransportError, type ProviderName } from '../errors.js';
import { Cancellation } from '../providers/cancellation.js';
import { createDispatcherPool } from '../providers/dispatcher-pool.js';
import type { AttemptContext } from '../providers/http-exchange.js';
import type { ObservedAttempt } from '../providers/observer.js';
import type { ReportResponse } from '../providers/provider.js';
import { resolveDeadlines } from './resolve-deadlines.js';
import { runAttempts, singleValue, type AttemptLoop, type AttemptRouting } from './run-attempts.js';
import type { Deadlines, ExchangeOptions } from './types.js';

/** What the runner is made of, as `createTransport` resolved it. */
export interface RunnerSettings {
  provider: ProviderName;
  /** The transport's deadlines, before a call's own. */
  deadlines: Deadlines;
  maxRetries: number;
  maxResponseBytes: number;
  random: () => number;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** The environment snapshot: where an outbound proxy is named. */
  env: Record<string, string | undefined>;
  /** Headers added to every request (the proxy's hop header). */
  upstreamHeaders: Readonly<Record<string, string>> | undefined;
}

/** Sleeps `ms`, or less when `signal` aborts. */
export function defaultSleep(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).then(
    () => undefined,
    () => undefined, // an abort is reported by the caller of sleep, from the signal's reason
  );
}

/** The attempts of a transport's exchanges, and the connections they use. */
export class ExchangeRunner {
  readonly #settings: RunnerSettings;
  readonly #pool: ReturnType<typeof createDispatcherPool>;
  #closed = false;

  constructor(settings: RunnerSettings) {
    this.#settings = settings;
    this.#pool = createDispatcherPool(settings.env);
  }

  /** @throws TransportError `MODEL_ECONFIG` once the transport was closed. */
  ensureOpen(): void {
    if (this.#closed)
      throw new TransportError('MODEL_ECONFIG', 'this transport was closed; create a new one');
  }

  /** Ends every exchange to come, and closes the pooled connections. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#pool.close();
  }

  /** The context of one attempt. */
  readonly attemptContext = (
    cancellation: Cancellation,
    deadlines: Deadlines,
    observed?: ObservedAttempt,
  ): AttemptContext => {
    const { upstreamHeaders } = this.#settings;
    const context: AttemptContext = {
      cancellation,
      deadlines,
      dispatcher: (ms) => this.#pool.get(ms),
      maxResponseBytes: this.#settings.maxResponseBytes,
      provider: this.#settings.provider,
      ...(upstreamHeaders === undefined ? {} : { upstreamHeaders }),
    };
    if (observed !== undefined) context.notes = observed.notes;
    return context;
  };

  /** The context of an exchange that makes no attempt (the none provider fails it at once). */
  immediateContext(): AttemptContext {
    return this.attemptContext(new Cancellation(), this.#settings.deadlines);
  }

  /** The attempts of one exchange, until one delivers everything: its values, as they come. */
  attempts<T>(
    exchangeOptions: ExchangeOptions,
    model: string | undefined,
    attempt: (context: AttemptContext, report: ReportResponse) => AsyncIterator<T>,
    routing?: AttemptRouting,
  ): AsyncGenerator<T> {
    return runAttempts({ ...this.#loop(exchangeOptions, model), routing }, attempt);
  }

  /**
   * One non-streaming exchange (a message, count_tokens, models) under its deadlines, with retries and
   * the `onResponse` report; `run` makes one attempt.
   */
  async run<T>(
    exchangeOptions: ExchangeOptions,
    run: (context: AttemptContext, report: ReportResponse) => Promise<T>,
    model?: string,
    routing?: AttemptRouting,
  ): Promise<T> {
    this.ensureOpen();
    let result: { value: T } | undefined;
    for await (const value of this.attempts(
      exchangeOptions,
      model,
      (context, report) => singleValue(() => run(context, report)),
      routing,
    )) {
      result = { value };
    }
    // The loop ends either with the one value delivered or with the error that ended the exchange.
    return result!.value;
  }

  /** The attempt loop's settings for one exchange: the transport's, with the call's options over them. */
  #loop(exchangeOptions: ExchangeOptions, model: string | undefined): AttemptLoop {
    const settings = this.#settings;
    return {
      deadlines: resolveDeadlines(settings.deadlines, exchangeOptions),
      maxRetries: exchangeOptions.maxRetries ?? settings.maxRetries,
      exchangeOptions,
      provider: settings.provider,
      model,
      context: this.attemptContext,
      random: settings.random,
      sleep: settings.sleep,
    };
  }
}
