/**
 * A small keep-alive HTTP load generator on undici's `Pool`: `connections` loops, each sending the same
 * request again as soon as the previous answer has been read to its end. Latency is measured per
 * request from just before it is sent to the end of its body; for streams, the time to the first body
 * chunk (the first event) as well. Requests sent during the warm-up are not counted.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { percentile } from './stats.js';

/** What to send, again and again. */
export interface LoadTarget {
  /** e.g. `http://127.0.0.1:41234` */
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface LoadOptions {
  connections: number;
  warmupMs: number;
  durationMs: number;
  /**
   * Keep going past `durationMs` until this many requests were measured (on an overloaded machine a
   * short smoke run might otherwise measure none), but never past a minute. @default 5
   */
  minRequests?: number;
}

/** Latency percentiles in ms. */
export interface Percentiles {
  p50: number;
  p99: number;
}

export interface LoadResult {
  /** Requests sent after the warm-up (the latency samples). */
  requests: number;
  /** Every request answered in full, warm-up included (for CPU time per request). */
  completedTotal: number;
  errors: number;
  /** The first failure seen, for the report. */
  firstError: string | undefined;
  /** Requests completed after the warm-up, per second of the measured window. */
  throughput: number;
  /** Send to end of body. */
  latency: Percentiles;
  /** Send to first body chunk. */
  firstByte: Percentiles;
}

/**
 * Sends `target` once and reads its answer to the end; resolves with the time its first body chunk
 * came (`performance.now()`), or rejects when the answer is not a 200 with a body.
 */
export async function sendOnce(pool: Pool, target: LoadTarget): Promise<number> {
  const response = await pool.request({
    method: 'POST',
    path: target.path,
    headers: target.headers,
    body: target.body,
  });
  let firstByteAt = Number.NaN;
  let size = 0;
  for await (const chunk of response.body) {
    if (size === 0) firstByteAt = performance.now();
    size += (chunk as Buffer).length;
  }
  if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}`);
  if (size === 0) throw new Error('empty body');
  return firstByteAt;
}

/** Runs the load and resolves with what was measured after the warm-up. */
export async function runLoad(target: LoadTarget, options: LoadOptions): Promise<LoadResult> {
  const pool = new Pool(target.origin, {
    connections: options.connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    keepAliveMaxTimeout: 60_000,
  });
  const latencies: number[] = [];
  const firstBytes: number[] = [];
  let completed = 0;
  let completedTotal = 0;
  let errors = 0;
  let firstError: string | undefined;
  const startedAt = performance.now();
  const measureFrom = startedAt + options.warmupMs;
  const endAt = measureFrom + options.durationMs;
  const giveUpAt = endAt + 60_000;
  const minRequests = options.minRequests ?? 5;
  const isDone = () => {
    const now = performance.now();
    return (now >= endAt && latencies.length >= minRequests) || now >= giveUpAt;
  };

  async function loop(): Promise<void> {
    while (!isDone()) {
      const sentAt = performance.now();
      let firstByteAt: number;
      try {
        firstByteAt = await sendOnce(pool, target);
      } catch (error) {
        errors++;
        firstError ??= error instanceof Error ? error.message : String(error);
        continue;
      }
      const doneAt = performance.now();
      // Every loop finishes its last request after `endAt`: the window ends when the last one does, so
      // every completion after the warm-up counts, and none is cut off at either end.
      completedTotal++;
      if (doneAt >= measureFrom) completed++;
      if (sentAt >= measureFrom) {
        latencies.push(doneAt - sentAt);
        firstBytes.push(firstByteAt - sentAt);
      }
    }
  }

  await Promise.all(Array.from({ length: options.connections }, loop));
  const windowMs = performance.now() - measureFrom;
  await pool.close();
  return {
    requests: latencies.length,
    completedTotal,
    errors,
    firstError,
    throughput: completed / (windowMs / 1000),
    latency: { p50: percentile(latencies, 50), p99: percentile(latencies, 99) },
    firstByte: { p50: percentile(firstBytes, 50), p99: percentile(firstBytes, 99) },
  };
}
