/**
 * One exchange's control: a cancellation that fires on caller cancel or the total deadline, with the
 * right `TransportError` as its reason.
 *
 * @module
 */
import { TransportError, isTransportError } from '../errors.js';
import { CANCELLATION, Cancellation, type WithCancellation } from '../providers/cancellation.js';
import type { Deadlines, ExchangeOptions } from './types.js';

export interface ExchangeControl {
  readonly cancellation: Cancellation;
  /** When the exchange started, in milliseconds since the epoch. */
  readonly startedAt: number;
  abort(reason: TransportError): void;
  /** Clears the total deadline's timer and the link to the caller's cancellation. */
  dispose(): void;
}

/**
 * Starts the control of one exchange. The proxy hands over its client's {@link Cancellation} (under
 * {@link CANCELLATION}) instead of a signal.
 */
export function startExchange(deadlines: Deadlines, exchangeOptions: ExchangeOptions): ExchangeControl {
  const cancellation = new Cancellation();
  const startedAt = Date.now();
  let timer: NodeJS.Timeout | undefined;
  if (deadlines.timeoutMs > 0) {
    timer = setTimeout(() => {
      cancellation.abort(
        new TransportError(
          'MODEL_ETIMEOUT',
          `the exchange did not finish within ${deadlines.timeoutMs} ms (total deadline)`,
          {
            deadline: 'total',
            retryable: false,
          },
        ),
      );
    }, deadlines.timeoutMs);
    timer.unref();
  }
  const caller = (exchangeOptions as WithCancellation)[CANCELLATION] ?? exchangeOptions.signal;
  const unlink =
    caller === undefined
      ? undefined
      : cancellation.follow(
          caller,
          () => new TransportError('MODEL_EABORTED', 'the exchange was cancelled by the caller'),
        );
  return {
    cancellation,
    startedAt,
    abort(reason: TransportError) {
      cancellation.abort(reason);
    },
    dispose() {
      if (timer !== undefined) clearTimeout(timer);
      unlink?.();
    },
  };
}

/** Why the exchange was cancelled, as the `TransportError` its caller hears. */
export function abortedError(cancellation: Cancellation): TransportError {
  const reason: unknown = cancellation.reason;
  return isTransportError(reason)
    ? reason
    : new TransportError('MODEL_EABORTED', 'the exchange was cancelled by the caller');
}
