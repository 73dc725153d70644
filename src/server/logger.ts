/**
 * The proxy's structured log: one pino line per exchange, with what an operator needs (request id,
 * provider, model, stream flag, status, duration, attempts, token usage) and nothing a client sent
 * in confidence. Credentials never reach a log record: the records are built field by field here, never
 * from request headers. Bodies appear only with the `logBodies` debug flag.
 *
 * @module
 */
import { pino, type Logger } from 'pino';
import type { ProviderName, TransportErrorCode } from '../errors.js';

/** Token usage as a Messages response reports it. */
export interface UsageRecord {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

/** One exchange, as logged. */
export interface ExchangeRecord {
  requestId: string;
  method: string;
  path: string;
  provider: ProviderName;
  status: number;
  durationMs: number;
  /** The model the client asked for. */
  model?: string;
  /** The model sent upstream, when the model mapping changed it. */
  upstreamModel?: string;
  /** The `max_tokens` sent upstream, when an output cap lowered it. */
  upstreamMaxTokens?: number;
  stream?: boolean;
  /** Upstream attempts (1 = no retry); absent when nothing was sent upstream. */
  attempts?: number;
  usage?: UsageRecord;
  /** The error's code, when the exchange failed (also after a stream started). */
  error?: TransportErrorCode;
  errorMessage?: string;
  /** The client went away before the answer was complete. */
  clientClosed?: boolean;
  /** Only with `logBodies`. */
  requestBody?: string;
  /** Only with `logBodies`, for JSON answers. */
  responseBody?: string;
}

/** How long a line may wait in the default logger's buffer before it is written. */
export const LOG_FLUSH_INTERVAL_MS = 250;

/**
 * The logger to use: the caller's, a silent one for `false`, or a new one writing JSON to stdout.
 *
 * The new one buffers: lines are written 4 KiB at a time, and at least every
 * {@link LOG_FLUSH_INTERVAL_MS}, instead of one write per exchange (each a hand-off to a worker
 * thread, 4% of the proxy's CPU per request). What is still buffered when the process exits is written
 * by pino's exit hook, so a line is late by a quarter of a second at most, and lost only if the process
 * is killed outright.
 */
export function createServerLogger(option: Logger | false | undefined): Logger {
  if (option === false) return pino({ enabled: false });
  return (
    option ??
    pino(
      { name: 'tpx-serve' },
      pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: LOG_FLUSH_INTERVAL_MS }),
    )
  );
}

/** Writes one exchange line: `info` for answers below 500, `warn` for server-side failures. */
export function logExchange(logger: Logger, record: ExchangeRecord, level: 'debug' | 'info' = 'info'): void {
  if (record.status >= 500) logger.warn(record, 'exchange');
  else if (level === 'debug') logger.debug(record, 'exchange');
  else logger.info(record, 'exchange');
}
