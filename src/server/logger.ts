/**
 * The proxy's structured log: one pino line per exchange, with what an operator needs (request id,
 * provider, model, stream flag, status, duration, attempts, token usage) and nothing a client sent
 * in confidence. Credentials never reach a log record: the records are built field by field here, never
 * from request headers. Bodies appear only with the `logBodies` debug flag.
 *
 * @module
 */
import { pino, type Logger } from 'pino';
import type { ExchangeObserver } from '../providers/observer.js';
import type { ExchangeSummary, ExchangeUsage } from '../telemetry/exchange-telemetry.js';

/** Token usage as a Messages response reports it. */
export type UsageRecord = ExchangeUsage;

/** One exchange, as logged: what telemetry reads of it, and what only the log line carries. */
export interface ExchangeRecord extends ExchangeSummary {
  /** The model sent upstream, when the model mapping changed it. */
  upstreamModel?: string;
  /** The upstream a route chose (`tpx serve --config`). */
  upstream?: string;
  /** The `max_tokens` sent upstream, when an output cap lowered it. */
  upstreamMaxTokens?: number;
  /** Upstream attempts (1 = no retry); absent when nothing was sent upstream. */
  attempts?: number;
  /** The client went away before the answer was complete. */
  clientClosed?: boolean;
  /** Only with `logBodies`: the caller's body. */
  requestBody?: string;
  /** Only with `logBodies`: each body sent upstream, by attempt, as sent (credentials travel in headers). */
  upstreamRequestBodies?: { attempt: number; body: string }[];
  /** Only with `logBodies`: the answer; for a stream, the message its events delivered. */
  responseBody?: string;
}

/** How long a line may wait in the default logger's buffer before it is written. */
export const LOG_FLUSH_INTERVAL_MS = 250;

/** How many bytes of lines the default logger gathers before it writes them. */
const LOG_BUFFER_BYTES = 4096;

/** A pino destination whose buffer is flushed while, and only while, something waits in it. */
export type BufferedDestination = ReturnType<typeof pino.destination>;

/**
 * A file descriptor (stdout by default) or file for log lines, buffered: lines are written
 * {@link LOG_BUFFER_BYTES} at a time, and none waits much longer than {@link LOG_FLUSH_INTERVAL_MS}.
 *
 * sonic-boom's own `periodicFlush` would do the waiting part, but it writes at every interval whether
 * a line waits or not: an idle proxy then handed an empty write to a worker thread four times a second
 * for as long as it ran (about 1.3 ms of CPU a second, and four wake-ups a second of an otherwise sleeping
 * process). Here the bytes handed over and the bytes written (the documented `'write'` event) are
 * counted, and the flush timer runs only while some are still to be written. What is buffered when the
 * process exits is written by pino's exit hook.
 */
export function bufferedDestination(dest: number | string = 1): BufferedDestination {
  const destination = pino.destination({ dest, sync: false, minLength: LOG_BUFFER_BYTES });
  const write = destination.write.bind(destination);
  const flushSync = destination.flushSync.bind(destination);
  let waitingBytes = 0;
  let timer: NodeJS.Timeout | undefined;
  const flushWhileWaiting = () => {
    timer = undefined;
    if (waitingBytes <= 0) return;
    try {
      // A flush while a write is on its way does nothing: the timer stays until the bytes are out.
      destination.flush();
    } catch {
      return; // the destination was destroyed: nothing more will be written
    }
    timer = setTimeout(flushWhileWaiting, LOG_FLUSH_INTERVAL_MS).unref();
  };
  destination.on('write', (bytes: number) => {
    waitingBytes = Math.max(0, waitingBytes - bytes);
  });
  destination.write = (data: string) => {
    // A destroyed destination throws here, before anything is counted or a timer set.
    const isBelowLimit = write(data);
    waitingBytes += Buffer.byteLength(data);
    timer ??= setTimeout(flushWhileWaiting, LOG_FLUSH_INTERVAL_MS).unref();
    return isBelowLimit;
  };
  // Writes everything at once, without `'write'` events (pino's exit hook calls it).
  destination.flushSync = () => {
    flushSync();
    waitingBytes = 0;
  };
  return destination;
}

/**
 * The logger to use: the caller's, a silent one for `false`, or a new one writing JSON to stdout.
 *
 * The new one buffers ({@link bufferedDestination}): lines are written 4 KiB at a time, and at least
 * every {@link LOG_FLUSH_INTERVAL_MS} while one waits, instead of one write per exchange (each a
 * hand-off to a worker thread, 4% of the proxy's CPU per request). What is still buffered when the
 * process exits is written by pino's exit hook, so a line is late by about a quarter of a second, and
 * lost only if the process is killed outright.
 */
export function createServerLogger(option: Logger | false | undefined): Logger {
  if (option === false) return pino({ enabled: false });
  return option ?? pino({ name: 'tpx-serve' }, bufferedDestination());
}

/** Writes one exchange line: `info` for answers below 500, `warn` for server-side failures. */
export function logExchange(logger: Logger, record: ExchangeRecord, level: 'debug' | 'info' = 'info'): void {
  if (record.status >= 500) logger.warn(record, 'exchange');
  else if (level === 'debug') logger.debug(record, 'exchange');
  else logger.info(record, 'exchange');
}

/**
 * `observer`, plus a debug line for each tool call the answer's translation repaired (arguments made
 * JSON, scalars fitted to the schema, a call read from text), when the logger writes debug lines;
 * `observer` itself otherwise. The line names the tool and the repair, never the arguments.
 */
export function withRepairLog(
  observer: ExchangeObserver | undefined,
  logger: Logger,
  requestId: () => string,
): ExchangeObserver | undefined {
  if (!logger.isLevelEnabled('debug')) return observer;
  const logging: ExchangeObserver = {
    onAttemptStart: (attempt) => observer?.onAttemptStart?.(attempt),
    onAttemptEnd(attempt) {
      observer?.onAttemptEnd?.(attempt);
      for (const repair of attempt.repairs ?? []) {
        logger.debug(
          { requestId: requestId(), attempt: attempt.number, tool: repair.tool, repair: repair.kind },
          'tool call repaired',
        );
      }
    },
  };
  // Only an observer that reads bodies gets them: the transport captures bodies for those alone.
  if (observer?.onAttemptBody !== undefined) {
    logging.onAttemptBody = (attempt, body) => observer.onAttemptBody?.(attempt, body);
  }
  return logging;
}
