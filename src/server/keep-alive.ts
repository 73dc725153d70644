/**
 * Keeping a silent stream alive. While the upstream says nothing (a slow local model's prefill can take
 * minutes), a load balancer or ingress between the client and the proxy sees an idle connection and
 * cuts it after its own timeout (HAProxy's `timeout server`, many ingresses' 60 s). Anthropic's API sends
 * `event: ping` frames for the same reason; Messages clients ignore them. The proxy does the same:
 *
 * - before the first event: once the upstream has been silent for one interval, the stream's headers go
 *   out with a ping (a failure after that is an `event: error` frame, no longer an HTTP error status);
 * - after it: a ping whenever nothing was written for a whole interval (so the wire is never silent for
 *   more than two intervals). A client that is slow to read gets no pings: it is not silent, it is full.
 *
 * @module
 */
import type { ServerResponse } from 'node:http';

/** The ping frame, byte for byte as Anthropic sends it. */
export const PING_FRAME = 'event: ping\ndata: {"type": "ping"}\n\n';

/** Default interval between pings while the upstream is silent, in milliseconds. */
export const DEFAULT_PING_INTERVAL_MS = 15_000;

/** Resolves `true` when `promise` settles within `ms`, else `false` (it is left to settle later). */
export function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    const settled = () => {
      clearTimeout(timer);
      resolve(true);
    };
    promise.then(settled, settled);
  });
}

/** Pings a streamed response while nothing else is written; see the module comment. */
export interface ResponsePinger {
  /** Something was written: no ping is due for another interval. */
  wrote(): void;
  /** No more pings (the stream ended). */
  stop(): void;
}

/** Starts pinging `response` every `intervalMs` of silence. */
export function startPinger(response: ServerResponse, intervalMs: number): ResponsePinger {
  let hasWritten = true;
  const timer = setInterval(() => {
    if (!hasWritten && !response.destroyed && !response.writableEnded && !response.writableNeedDrain) {
      response.write(PING_FRAME);
    }
    hasWritten = false;
  }, intervalMs);
  // The connection keeps the process alive while it is open; the pings need not.
  timer.unref();
  return {
    wrote() {
      hasWritten = true;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
