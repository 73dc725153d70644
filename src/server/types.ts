/**
 * The shapes the proxy's handler works with, independent of `node:http`: an inbound request whose body
 * is read on demand, and a response that is either one JSON body or a sequence of SSE frames. The
 * handler is tested in-process with these; `node-adapter.ts` maps them to a real socket.
 *
 * @module
 */
import type { Cancellation } from '../providers/cancellation.js';

/** One request to the proxy. */
export interface InboundRequest {
  /** The HTTP method, upper case. */
  method: string;
  /** The request target as received: the path and an optional `?query` (`/v1/messages?beta=true`). */
  url: string;
  /** The HTTP version of the request line (`1.1`, `1.0`), when known. */
  httpVersion?: string;
  /** Request headers, names in lower case (as `node:http` gives them). */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /**
   * The headers as sent (name, value, name, value, …), when known: the only place a repeated header
   * that `headers` folds into one (such as `Host`) can still be seen.
   */
  rawHeaders?: readonly string[];
  /**
   * Reads the whole body within the proxy's size limit. Rejects with `MODEL_ETOOBIG` (413) as soon as
   * the declared or received size passes the limit, without reading the rest. Call it at most once.
   */
  readBody(): Promise<Uint8Array>;
  /** Aborts when the client goes away (or the server gives up on the exchange at shutdown). */
  readonly signal: AbortSignal;
  /**
   * The same as `signal`, without the cost of an `AbortSignal`: when present, the transport is given
   * this instead (see `providers/cancellation.ts`).
   */
  readonly cancellation?: Cancellation;
}

/** A response with one body, already serialised. */
export interface JsonResponse {
  kind: 'json';
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * A Messages event stream. The headers are only produced once the first event exists, so a failure
 * before it is a {@link JsonResponse} with a real error status instead.
 */
export interface SseResponse {
  kind: 'sse';
  status: 200;
  headers: Record<string, string>;
  /**
   * Complete SSE frames, each string one or more of them (the events one upstream chunk produced), to
   * be written and flushed one string at a time. Stopping the iteration early (a client that went away)
   * ends the upstream exchange.
   */
  frames: AsyncIterable<string>;
}

/** What the handler answers. */
export type ProxyResponse = JsonResponse | SseResponse;

/** Maps a request to a response. Never rejects: every failure is answered as a Messages error. */
export type ProxyHandler = (request: InboundRequest) => Promise<ProxyResponse>;
