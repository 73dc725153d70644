/**
 * The one attempt loop every exchange runs in — a message, a stream, count_tokens, the model list:
 * attempts under the exchange's deadlines, a wait between them, the `onResponse` report and the
 * observer's view of each attempt.
 *
 * An attempt is an async iterator of what it delivers (a stream's event batches; a single value for
 * the rest). An attempt that fails before delivering anything may be retried; once anything reached the
 * caller, never — the caller would see the exchange twice.
 *
 * @module
 */
import { TransportError, toTransportError, type ProviderName } from '../errors.js';
import type { Cancellation } from '../providers/cancellation.js';
import type { AttemptContext } from '../providers/http-exchange.js';
import { startAttempt, type ObservedAttempt } from '../providers/observer.js';
import type { ReportResponse } from '../providers/provider.js';
import { abortedError, startExchange, type ExchangeControl } from './start-exchange.js';
import { retryDelayMs } from './retry-delay.js';
import { withRetriesSpent } from './with-retries-spent.js';
import type { Deadlines, ExchangeOptions } from './types.js';

/** The longest upstream hint waited for when the exchange has no total deadline: the default one. */
const LONGEST_WAIT_WITHOUT_DEADLINE_MS = 600_000;

/** What the loop needs beyond the attempt itself. */
export interface AttemptLoop {
  deadlines: Deadlines;
  maxRetries: number;
  exchangeOptions: ExchangeOptions;
  provider: ProviderName;
  /** The model asked for, for the observer. */
  model: string | undefined;
  /** The context of one attempt. */
  context: (cancellation: Cancellation, deadlines: Deadlines, observed?: ObservedAttempt) => AttemptContext;
  random: () => number;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Where the attempts go when routes pick among several upstreams (see `routes/route-cursor.ts`). */
  routing?: AttemptRouting | undefined;
}

/**
 * How a routed exchange moves between upstreams: asked after each failed attempt that delivered nothing.
 * `switched`: the next attempt goes to another upstream, at once (an upstream's retry hint is its own);
 * `same`: the next attempt, if the usual rules allow one, goes to the same upstream; `stop`: none does
 * (the upstream's breaker opened and no other target is available).
 */
export interface AttemptRouting {
  afterFailure(error: TransportError): 'switched' | 'same' | 'stop';
}

/** Whether to try again, honouring `x-should-retry` both ways. */
function shouldRetry(error: TransportError): boolean {
  const hint = error.headers['x-should-retry'];
  if (hint === 'true') return true;
  if (hint === 'false') return false;
  return error.retryable;
}

/**
 * Waits before the next attempt, or throws the error that ends the exchange. An upstream's hint is
 * waited for however long it is, as long as the attempt after it can start within the total deadline;
 * a hint past the deadline ends the exchange at once with the error that carried it, rather than sleep
 * into a certain timeout.
 */
async function backoff(
  error: TransportError,
  retryIndex: number,
  loop: AttemptLoop,
  exchange: ExchangeControl,
): Promise<void> {
  const route = exchange.cancellation.aborted ? 'stop' : (loop.routing?.afterFailure(error) ?? 'same');
  if (route === 'stop' || (route === 'same' && !shouldRetry(error)) || exchange.cancellation.aborted) {
    throw error;
  }
  // The retries this exchange may make are spent: its caller is told not to make more of its own.
  // A fallback to another upstream spends the same budget as a retry.
  if (retryIndex >= loop.maxRetries) throw loop.maxRetries > 0 ? withRetriesSpent(error) : error;
  if (route === 'switched') return;
  const wait = retryDelayMs({ retryIndex, headers: error.headers, nowMs: Date.now(), random: loop.random() });
  const { timeoutMs } = loop.deadlines;
  const fits =
    timeoutMs > 0
      ? Date.now() - exchange.startedAt + wait < timeoutMs
      : wait <= LONGEST_WAIT_WITHOUT_DEADLINE_MS;
  if (!fits) throw withRetriesSpent(error);
  try {
    loop.exchangeOptions.onRetry?.({ attempt: retryIndex + 1, error, delayMs: wait });
  } catch {
    // A caller's hook that throws must not change the exchange, as with observers.
  }
  await loop.sleep(wait, exchange.cancellation.signal);
  if (exchange.cancellation.aborted) throw abortedError(exchange.cancellation);
}

/**
 * Runs `attempt` until one delivers everything or the exchange ends: its values, as they come. A
 * consumer that stops early ends the upstream request too.
 */
export async function* runAttempts<T>(
  loop: AttemptLoop,
  attempt: (context: AttemptContext, report: ReportResponse) => AsyncIterator<T>,
): AsyncGenerator<T> {
  const { exchangeOptions } = loop;
  const exchange = startExchange(loop.deadlines, exchangeOptions);
  let delivered = false;
  let finished = false;
  try {
    for (let attemptIndex = 0; ; attemptIndex++) {
      if (exchange.cancellation.aborted) throw abortedError(exchange.cancellation);
      let status = 0;
      let headers: Record<string, string> = {};
      let reported = false;
      const report = () => {
        if (!reported && status !== 0) {
          reported = true;
          exchangeOptions.onResponse?.({ status, headers, attempts: attemptIndex + 1 });
        }
      };
      const observed = startAttempt(exchangeOptions.observer, attemptIndex + 1, loop.provider, loop.model);
      const iterator = attempt(loop.context(exchange.cancellation, loop.deadlines, observed), (s, h) => {
        status = s;
        headers = h;
      });
      try {
        for (;;) {
          const next = await iterator.next();
          if (next.done === true) {
            finished = true;
            observed?.end(status);
            report();
            return;
          }
          report();
          delivered = true;
          yield next.value;
        }
      } catch (raw) {
        const error = exchange.cancellation.aborted
          ? abortedError(exchange.cancellation)
          : toTransportError(raw);
        observed?.end(status, error);
        if (delivered) throw error;
        try {
          await backoff(error, attemptIndex, loop, exchange);
        } catch (final) {
          report();
          throw final;
        }
      } finally {
        if (!exchange.cancellation.aborted) await iterator.return?.(undefined);
        if (observed?.isEnded === false) {
          observed.end(status, new TransportError('MODEL_EABORTED', 'the stream was closed by the caller'));
        }
      }
    }
  } finally {
    // A stream the consumer left early still has an upstream request to end; a finished one has not,
    // and skipping the abort spares building an error (and its stack) on every normal exchange.
    if (!finished && !exchange.cancellation.aborted) {
      exchange.abort(new TransportError('MODEL_EABORTED', 'the stream was closed by the caller'));
    }
    exchange.dispose();
  }
}

/** One attempt of an exchange that delivers a single value, as the iterator {@link runAttempts} takes. */
export async function* singleValue<T>(value: () => Promise<T>): AsyncGenerator<T> {
  yield await value();
}
