/**
 * `TransportError` and the stable `MODEL_*` codes. This file sits at the bottom of the layers: every
 * other layer, translation included, may raise these errors, and this file imports nothing.
 *
 * @module
 */

/** Stable error codes. Codes are public API; messages may change between releases. */
export type TransportErrorCode =
  | 'MODEL_EAUTH'
  | 'MODEL_EINVAL'
  | 'MODEL_EPAIRING'
  | 'MODEL_EHTTP'
  | 'MODEL_ETRANSPORT'
  | 'MODEL_EPROTO'
  | 'MODEL_ETIMEOUT'
  | 'MODEL_EABORTED'
  | 'MODEL_ETOOBIG'
  | 'MODEL_ECONFIG';

/** The `error.type` values of a Messages error body. */
export type MessagesErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'timeout_error'
  | 'overloaded_error';

/** A Messages error body: what `tpx serve` answers with, and what an SSE `error` frame carries. */
export interface MessagesErrorBody {
  type: 'error';
  error: { type: MessagesErrorType; message: string };
  request_id?: string;
}

/** Which provider an error came from, when it came from one. */
export type ProviderName = 'anthropic' | 'tpx' | 'none';

/** Which deadline passed, for `MODEL_ETIMEOUT`. */
export type DeadlineName = 'connect' | 'first-byte' | 'idle' | 'total';

const BRAND = Symbol.for('tpx-transport.TransportError');

/** Defaults for each code: status, Messages error type, and whether a retry may help. */
const CODE_DEFAULTS: Record<
  TransportErrorCode,
  { status: number; type: MessagesErrorType; retryable: boolean }
> = {
  MODEL_EAUTH: { status: 401, type: 'authentication_error', retryable: false },
  MODEL_EINVAL: { status: 400, type: 'invalid_request_error', retryable: false },
  MODEL_EPAIRING: { status: 400, type: 'invalid_request_error', retryable: false },
  MODEL_EHTTP: { status: 500, type: 'api_error', retryable: false },
  MODEL_ETRANSPORT: { status: 502, type: 'api_error', retryable: true },
  MODEL_EPROTO: { status: 502, type: 'api_error', retryable: false },
  MODEL_ETIMEOUT: { status: 504, type: 'timeout_error', retryable: true },
  MODEL_EABORTED: { status: 499, type: 'api_error', retryable: false },
  MODEL_ETOOBIG: { status: 413, type: 'request_too_large', retryable: false },
  MODEL_ECONFIG: { status: 500, type: 'api_error', retryable: false },
};

/** Options accepted by the `TransportError` constructor. */
export interface TransportErrorOptions {
  /** HTTP-like status. @default the code's default (see docs/errors.md) */
  status?: number;
  /** The Messages `error.type` for `body`. @default the code's default */
  type?: MessagesErrorType;
  /** Whether retrying the same exchange may succeed. @default the code's default */
  retryable?: boolean;
  /** The underlying error. */
  cause?: unknown;
  /** The provider the error came from. */
  provider?: ProviderName;
  /** The upstream request id, when known. */
  requestId?: string;
  /** Which deadline passed (`MODEL_ETIMEOUT` only). */
  deadline?: DeadlineName;
  /** Delay the upstream asked for before a retry, in milliseconds (from `retry-after`). */
  retryAfterMs?: number;
  /**
   * The upstream response headers tpx-transport keeps (lower-case names): request ids, `retry-after`,
   * `retry-after-ms`, `x-should-retry` and rate-limit headers; see `translate/pick-response-headers.ts`.
   */
  headers?: Record<string, string>;
}

/**
 * The one error type the transport raises. `code` is stable; `body` is a ready Messages error body.
 *
 * @example
 * ```ts
 * try { await transport.send(request) }
 * catch (error) { if (isTransportError(error) && error.code === 'MODEL_ETIMEOUT') … }
 * ```
 */
export class TransportError extends Error {
  override readonly name = 'TransportError';
  readonly code: TransportErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  readonly body: MessagesErrorBody;
  readonly provider: ProviderName | undefined;
  readonly requestId: string | undefined;
  readonly deadline: DeadlineName | undefined;
  readonly retryAfterMs: number | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: TransportErrorCode, message: string, options: TransportErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const defaults = CODE_DEFAULTS[code];
    this.code = code;
    this.status = options.status ?? defaults.status;
    this.retryable = options.retryable ?? defaults.retryable;
    this.provider = options.provider;
    this.requestId = options.requestId;
    this.deadline = options.deadline;
    this.retryAfterMs = options.retryAfterMs;
    this.headers = options.headers ?? {};
    const body: MessagesErrorBody = {
      type: 'error',
      error: { type: options.type ?? defaults.type, message },
    };
    if (options.requestId !== undefined) body.request_id = options.requestId;
    this.body = body;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** True for a `TransportError`, also across two loaded copies of this package. */
export function isTransportError(value: unknown): value is TransportError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/** The Messages error type for an HTTP status (Anthropic's own table, docs/protocol.md A.8 / D.7). */
export function errorTypeForStatus(status: number): MessagesErrorType {
  switch (status) {
    case 400:
    case 422:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 408:
    case 504:
      return 'timeout_error';
    case 409:
      return 'conflict_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/** The HTTP status Anthropic uses for a Messages error type (the inverse of `errorTypeForStatus`). */
export function statusForErrorType(type: string): number {
  switch (type) {
    case 'invalid_request_error':
      return 400;
    case 'authentication_error':
      return 401;
    case 'billing_error':
      return 402;
    case 'permission_error':
      return 403;
    case 'not_found_error':
      return 404;
    case 'conflict_error':
      return 409;
    case 'request_too_large':
      return 413;
    case 'rate_limit_error':
      return 429;
    case 'timeout_error':
      return 504;
    case 'overloaded_error':
      return 529;
    default:
      return 500;
  }
}

/** Whether an upstream status is worth retrying (the official SDKs' rule: 408, 409, 429, 5xx). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Wraps anything thrown into a `TransportError`, keeping existing ones as they are. */
export function toTransportError(
  error: unknown,
  fallback: TransportErrorCode = 'MODEL_EPROTO',
): TransportError {
  if (isTransportError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new TransportError(fallback, message, { cause: error });
}
