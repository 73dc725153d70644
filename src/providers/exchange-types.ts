/**
 * The shapes one exchange is described by — its deadlines and options, what a provider reports back, a
 * `count_tokens` request and answer. They sit at the providers' level so that providers and the
 * transport above them both import downward; `transport/types.ts` re-exports them as public API.
 *
 * @module
 */
import type { TransportError } from '../errors.js';
import type { MessageParam, MessagesRequest, ToolParam } from '../protocol/messages.js';
import type { ExchangeObserver } from './observer.js';

/** Deadlines, in milliseconds. Each bounds one phase of an exchange; `0` disables one. */
export interface Deadlines {
  /** Time to open the TCP (and TLS) connection. @default 10_000 */
  connectTimeoutMs: number;
  /** Time from sending the request to receiving the response headers. @default 60_000 */
  firstByteTimeoutMs: number;
  /** Longest silence between two chunks of a response body or stream. @default 120_000 */
  idleTimeoutMs: number;
  /** The whole exchange, retries and their delays included. @default 600_000 */
  timeoutMs: number;
}

/** Options for one exchange (`send` / `stream`). Each one overrides the transport's default. */
export interface ExchangeOptions extends Partial<Deadlines> {
  /** Cancels the exchange at any point: the result is `MODEL_EABORTED`. */
  signal?: AbortSignal;
  /** Retries on network errors, 408, 409, 429 and 5xx before anything reached the caller. @default 2 */
  maxRetries?: number;
  /**
   * Caller headers to pass on where the provider understands them: `anthropic-version` and
   * `anthropic-beta` on the native path. Credentials here are ignored.
   */
  headers?: Record<string, string | string[] | undefined>;
  /** A query string for the native path, e.g. `beta=true`. */
  query?: string;
  /**
   * The caller's request exactly as received (the proxy passes the client's bytes), so the native
   * provider can send it without re-serialising. Must encode the same request as `request`.
   */
  rawBody?: string | Uint8Array;
  /** Called once with the provider's response status and headers, before the result is delivered. */
  onResponse?: (info: ResponseInfo) => void;
  /** Sees each upstream attempt (metrics, traces); see `providers/observer.ts`. @default undefined */
  observer?: ExchangeObserver;
  /**
   * Called when an attempt failed and another follows: which attempt, why (the error: a deadline, a
   * status, a network failure), and how long the wait before the next one is. @default undefined
   */
  onRetry?: (retry: RetryInfo) => void;
}

/** A failed attempt that is retried (`ExchangeOptions.onRetry`). */
export interface RetryInfo {
  /** The attempt that failed: 1 for the first. */
  attempt: number;
  /** Why it failed: its `code`, `status`, `deadline` and message. */
  error: TransportError;
  /** The wait before the next attempt, in milliseconds. */
  delayMs: number;
}

/** What a provider said besides the body: useful to a proxy that passes headers on. */
export interface ResponseInfo {
  status: number;
  /** Headers worth passing back to a client (`request-id`, `retry-after`, rate-limit headers). */
  headers: Record<string, string>;
  /** How many attempts the exchange took (1 = no retry). */
  attempts: number;
  /** The model name sent upstream, when the model mapping changed it. */
  upstreamModel?: string;
  /** The `max_tokens` sent upstream, when an output cap lowered it. */
  upstreamMaxTokens?: number;
  /** The named upstream that answered, when routes pick among several (`--config`). */
  upstream?: string;
}

/** What the upstream says about itself: its model list and context window (see `inspectUpstream`). */
export interface UpstreamReport {
  /** The model-list URL called, e.g. `http://127.0.0.1:8000/v1/models`. */
  readonly modelsUrl: string;
  /** The HTTP status of that call. */
  readonly modelsStatus: number;
  /** Its content type, as sent. */
  readonly modelsContentType: string;
  /** The models listed (with each one's context window where stated); absent when there is no usable list. */
  readonly models?: readonly { readonly id: string; readonly contextWindow?: number }[];
  /** Why there is no list, for people: `answered 404`, `answered text/html, not a JSON model list`. */
  readonly problem?: string;
  /** The server-wide context window (llama.cpp `/props`) and the URL that stated it. */
  readonly contextWindow?: { readonly tokens: number; readonly source: string };
  /**
   * What kind of server it said it is, and the URL that said so: asked only when no dialect names the
   * server (`openai-generic`).
   */
  readonly server?: { readonly kind: ServerKind; readonly source: string };
}

/** The kinds of local model servers tpx can recognise by what they say of themselves. */
export type ServerKind = 'llamacpp' | 'vllm' | 'ollama' | 'lmstudio';

/** A `count_tokens` request: a Messages request without `max_tokens`. Unknown fields are kept. */
export interface CountTokensRequest {
  model: string;
  messages: MessageParam[];
  system?: MessagesRequest['system'];
  tools?: ToolParam[];
  [key: string]: unknown;
}

/** The answer of `count_tokens`. */
export interface TokenCount {
  input_tokens: number;
  [key: string]: unknown;
}
