/**
 * What the proxy hands, once per finished exchange, to whatever keeps exchanges beyond the log line: the
 * journal (`--journal DIR`, `journal/journal-writer.ts`) and the live view (`live-view.ts`). A recorder
 * is called synchronously at the end of the exchange and must return at once: anything slow (parsing,
 * hashing media, writing a file) happens later, off the exchange's path.
 *
 * @module
 */
import { exchangeUpstreamName } from '../journal/upstream-name.js';
import type { ExchangeRecord, UsageRecord } from './logger.js';

/** One finished exchange, as the recorders see it. Credentials are never part of it. */
export interface FinishedExchange {
  /** The exchange's log record: id, route, status, model, usage, duration, error code, retries. */
  readonly record: Readonly<ExchangeRecord>;
  /** When the exchange started, in ms since the epoch. */
  readonly startedAtMs: number;
  /** From the start of the exchange until its answer could start going out, in ms. */
  readonly firstByteMs?: number;
  /** When bodies are kept: the caller's body, as received. */
  readonly requestText?: string;
  /** When bodies are kept: each body sent upstream, by attempt, as sent. */
  readonly upstreamBodies?: readonly { attempt: number; body: string }[];
  /** When bodies are kept: the answer (for a stream, the message it delivered), as JSON text. */
  readonly responseText?: string;
  /** The Messages error body the caller got (as an HTTP answer or a stream's `error` event), as JSON text. */
  readonly errorText?: string;
}

/** Keeps finished exchanges; see the module comment. */
export interface ExchangeRecorder {
  /** Whether this recorder needs the bodies (`requestText`, `upstreamBodies`, `responseText`). */
  readonly needsBodies: boolean;
  /** Takes one finished exchange; returns at once and never throws. */
  record(exchange: FinishedExchange): void;
}

/** Several recorders as one (or `undefined` when there are none). */
export function combineRecorders(
  recorders: readonly (ExchangeRecorder | undefined)[],
): ExchangeRecorder | undefined {
  const present = recorders.filter((recorder): recorder is ExchangeRecorder => recorder !== undefined);
  if (present.length <= 1) return present[0];
  return {
    needsBodies: present.some((recorder) => recorder.needsBodies),
    record(exchange) {
      for (const recorder of present) recorder.record(exchange);
    },
  };
}

/** What the journal and the live view both show first of an exchange: who, when, which model, how. */
export interface ExchangeHeadline {
  id: string;
  /** When it started (ISO 8601, UTC). */
  time: string;
  status: number;
  upstream: string;
  /** The model the caller asked for. */
  model?: string;
  /** The model named upstream. */
  upstreamModel?: string;
  stream?: boolean;
  usage?: UsageRecord;
  durationMs: number;
  firstByteMs?: number;
}

/** The headline of a finished exchange, from its log record. */
export function exchangeHeadline(exchange: FinishedExchange): ExchangeHeadline {
  const { record } = exchange;
  const headline: ExchangeHeadline = {
    id: record.requestId,
    time: new Date(exchange.startedAtMs).toISOString(),
    status: record.status,
    upstream: exchangeUpstreamName(record),
    durationMs: record.durationMs,
  };
  if (record.model !== undefined) headline.model = record.model;
  if (record.upstreamModel !== undefined) headline.upstreamModel = record.upstreamModel;
  if (record.stream !== undefined) headline.stream = record.stream;
  if (record.usage !== undefined) headline.usage = { ...record.usage };
  if (exchange.firstByteMs !== undefined) headline.firstByteMs = exchange.firstByteMs;
  return headline;
}
