/**
 * One line of the journal (`tpx serve --journal DIR`): a whole `POST /v1/messages` exchange as JSON.
 *
 * ```json
 * {"id":"req_…","time":"2026-05-01T09:30:00.000Z","status":200,"upstream":"default","provider":"tpx",
 *  "model":"claude-sonnet-4-5","upstreamModel":"qwen3-32b","stream":true,
 *  "usage":{"input_tokens":120,"output_tokens":31},"durationMs":812.4,"firstByteMs":95.1,
 *  "request":{…the caller's Messages body…},
 *  "upstreamRequests":[{"attempt":1,"body":{…the body sent upstream, as sent…}}],
 *  "response":{…the delivered message; for a stream, the message its events delivered…}}
 * ```
 *
 * A failed exchange has `error` (the Messages error body the caller got) instead of, or, for a stream
 * cut short, besides `response`, and `errorCode` (`MODEL_*`). Credentials never appear: bodies carry
 * none (they travel in headers, which are not recorded). Media is kept as hash and size unless the
 * journal keeps it (`redact-media.ts`).
 *
 * @module
 */

/** One upstream attempt's body, as sent. */
export interface JournalUpstreamRequest {
  attempt: number;
  body: unknown;
}

/** Token counts, as a Messages `usage` has them. */
export interface JournalUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

/** One journal line; see the module comment. */
export interface JournalRecord {
  /** The exchange's request id (the `request-id` header the caller got). */
  id: string;
  /** When the exchange started (ISO 8601, UTC). */
  time: string;
  status: number;
  /** The upstream that served it. */
  upstream: string;
  /** The provider behind it: `anthropic`, `tpx` or `none`. */
  provider: string;
  /** The model the caller asked for. */
  model?: string;
  /** The model named in the upstream request, when the transport got that far. */
  upstreamModel?: string;
  stream?: boolean;
  /** Token counts as the Messages `usage` reports them (`input_tokens`, `output_tokens`, cache fields). */
  usage?: JournalUsage;
  durationMs: number;
  firstByteMs?: number;
  attempts?: number;
  /** The attempts that failed and were retried, with why (as in the exchange's log line). */
  retries?: readonly unknown[];
  /** The caller went away before the answer was complete. */
  clientClosed?: boolean;
  /** The caller's Messages body. */
  request?: unknown;
  /** Each body sent upstream, by attempt; the last one is the one answered. */
  upstreamRequests?: JournalUpstreamRequest[];
  /** The delivered message (for a stream, accumulated from its events). */
  response?: unknown;
  /** The Messages error body the caller got. */
  error?: unknown;
  /** The error's `MODEL_*` code. */
  errorCode?: string;
}
