/**
 * An open-loop load at a fixed rate, on undici's keep-alive `Pool`: requests are started on a schedule,
 * request `n` due `n / rate` seconds after the start, whatever the server does with them.
 *
 * A closed loop (`load.ts`) sends the next request when the previous answer ends, so a slower server
 * is sent fewer requests a second; each of its event loop's wake-ups then carries fewer of them, and
 * its CPU per request rises for that reason alone. Here every server under comparison gets the same
 * requests a second, so their CPU per request is a question about the same traffic.
 *
 * A timer wakes at the next due time and starts every request due since the start that has not been
 * started yet, so a late timer (a busy machine) sends a few at once and the rate holds. At most
 * `maxInFlight` requests are in flight (the pool opens as many connections, no more); a request that
 * falls due while that many are in flight is not sent and is counted as missed, rather than queued
 * without bound: a server that misses requests did not get the traffic asked for, and the report says
 * so.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { sendOnce, type LoadResult, type LoadTarget } from './load.js';
import { percentile } from './stats.js';

export interface FixedRateOptions {
  /** Requests started per second, spread evenly. */
  ratePerSecond: number;
  /** Requests in flight at most (and connections open); one due beyond that is missed. */
  maxInFlight: number;
  warmupMs: number;
  durationMs: number;
  /**
   * Keep the schedule going past `durationMs` until this many requests were sent after the warm-up (a
   * short smoke run at a low rate might otherwise send none), but never past a minute. @default 5
   */
  minRequests?: number;
}

/** How the schedule went, over the measured window (after the warm-up). */
export interface RateSchedule {
  /** Requests per second asked for. */
  askedRate: number;
  /**
   * Requests sent in the measured window and answered in full, per second of the window, counted by
   * the time each was actually sent (not the time it was due): the rate the server really got.
   */
  achievedRate: number;
  /** Requests due in the measured window. */
  due: number;
  /** Of those, how many were not sent because `maxInFlight` requests were in flight. */
  missed: number;
  /** How late requests were sent after their due time (the timer's lateness), 99th percentile, ms. */
  sendLagP99: number;
}

export interface FixedRateResult extends LoadResult {
  schedule: RateSchedule;
}

/** Runs the schedule, waits for every request it sent, and resolves with what was measured after the warm-up. */
export async function runFixedRateLoad(
  target: LoadTarget,
  options: FixedRateOptions,
): Promise<FixedRateResult> {
  if (!(options.ratePerSecond > 0)) throw new Error(`fixed rate: ${options.ratePerSecond} requests a second`);
  const pool = new Pool(target.origin, {
    connections: options.maxInFlight,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    keepAliveMaxTimeout: 60_000,
  });
  const intervalMs = 1000 / options.ratePerSecond;
  const minRequests = options.minRequests ?? 5;
  const latencies: number[] = [];
  const firstBytes: number[] = [];
  const sendLags: number[] = [];
  const inFlight = new Set<Promise<void>>();
  let scheduled = 0;
  let due = 0;
  let missed = 0;
  let sentInWindow = 0;
  /** When each answered request was sent, to count those sent in the measured window at the end. */
  const answeredSentAt: number[] = [];
  let completed = 0;
  let completedTotal = 0;
  let lastCompletionAt = Number.NaN;
  let errors = 0;
  let firstError: string | undefined;
  const startedAt = performance.now();
  const measureFrom = startedAt + options.warmupMs;
  // The measured window starts at the first due time after the warm-up, so that it holds whole
  // intervals: `due` requests over `due` intervals.
  const windowStart = startedAt + Math.ceil(options.warmupMs / intervalMs) * intervalMs;
  const endAt = measureFrom + options.durationMs;
  const giveUpAt = endAt + 60_000;
  // Where the measured window ends: the due time of the first request the schedule no longer starts.
  let windowEnd = endAt;

  async function send(dueAt: number): Promise<void> {
    const sentAt = performance.now();
    const isMeasured = dueAt >= measureFrom;
    if (isMeasured) sendLags.push(sentAt - dueAt);
    let firstByteAt: number;
    try {
      firstByteAt = await sendOnce(pool, target);
    } catch (error) {
      errors++;
      firstError ??= error instanceof Error ? error.message : String(error);
      return;
    }
    const doneAt = performance.now();
    completedTotal++;
    if (doneAt >= measureFrom) {
      completed++;
      lastCompletionAt = doneAt;
    }
    if (sentAt >= measureFrom) {
      latencies.push(doneAt - sentAt);
      firstBytes.push(firstByteAt - sentAt);
    }
    answeredSentAt.push(sentAt);
  }

  /** Starts every request due by now; returns the time the next one is due, or `undefined` at the end. */
  function startDue(): number | undefined {
    const now = performance.now();
    for (;;) {
      const dueAt = startedAt + scheduled * intervalMs;
      if ((dueAt >= endAt && sentInWindow >= minRequests) || dueAt >= giveUpAt) {
        windowEnd = dueAt;
        return undefined;
      }
      if (dueAt > now) return dueAt;
      scheduled++;
      const isMeasured = dueAt >= measureFrom;
      if (isMeasured) due++;
      if (inFlight.size >= options.maxInFlight) {
        if (isMeasured) missed++;
        continue;
      }
      if (isMeasured) sentInWindow++;
      const request = send(dueAt).finally(() => inFlight.delete(request));
      inFlight.add(request);
    }
  }

  for (let next = startDue(); next !== undefined; next = startDue()) {
    await sleep(Math.max(0, next - performance.now()));
  }
  await Promise.all(inFlight);
  const windowSeconds = (windowEnd - windowStart) / 1000;
  // Counted by when each left, so that a timer that fell behind shows as a lower rate.
  const answeredInWindow = answeredSentAt.filter(
    (sentAt) => sentAt >= windowStart && sentAt < windowEnd,
  ).length;
  await pool.close();
  return {
    requests: latencies.length,
    completedTotal,
    errors,
    firstError,
    throughput: completed / ((lastCompletionAt - measureFrom) / 1000),
    latency: { p50: percentile(latencies, 50), p99: percentile(latencies, 99) },
    firstByte: { p50: percentile(firstBytes, 50), p99: percentile(firstBytes, 99) },
    schedule: {
      askedRate: options.ratePerSecond,
      achievedRate: answeredInWindow / windowSeconds,
      due,
      missed,
      sendLagP99: percentile(sendLags, 99),
    },
  };
}
