/**
 * Maps what a provider answers instead of a response — an error status with a body — to a
 * `TransportError` (`MODEL_EHTTP`, or `MODEL_EAUTH` for a 401) whose `body` is a Messages error body
 * (docs/protocol.md A.8, B.5, D.7, and the loose error bodies of Part C quirks 17, 18 and 22). An error
 * object inside an HTTP 200 stream is `map-stream-error-object.ts`'s.
 *
 * @module
 */
import {
  TransportError,
  errorTypeForStatus,
  isRetryableStatus,
  type MessagesErrorType,
  type ProviderName,
} from '../errors.js';
import { isObject } from '../protocol/is-object.js';
import { describeContextOverflow } from './describe-context-overflow.js';
import { describeJsonError, readMessagesError } from './describe-json-error.js';
import { describeNonJsonBody, reasonPhrase } from './describe-non-json-body.js';
import { parseRetryAfter } from './parse-retry-after.js';
import { pickResponseHeaders } from './pick-response-headers.js';
import { excerpt } from './quote-upstream-text.js';
import {
  MESSAGES_ERROR_TYPES,
  OVERLOADED_CODES,
  OVERLOADED_TEXT,
  isErrorStatus,
} from './upstream-error-kinds.js';

/** The provider an upstream error came from (never `none`: that provider has no upstream). */
export type UpstreamProvider = Extract<ProviderName, 'anthropic' | 'tpx'>;

/** An upstream HTTP answer with an error status, as the provider read it. */
export interface UpstreamErrorResponse {
  /** The upstream HTTP status. */
  status: number;
  /** The response body, as text (possibly empty, possibly not JSON). */
  bodyText: string;
  /** The `content-type` response header, when there was one. */
  contentType?: string | undefined;
  /** Response headers (any letter case). `retry-after`, rate-limit headers and request ids are read. */
  headers?: Record<string, string> | undefined;
  provider: UpstreamProvider;
}

/**
 * The `TransportError` for an upstream error answer: `MODEL_EAUTH` for a 401 (the provider refused the
 * credentials), `MODEL_EHTTP` for every other status.
 *
 * How the body is read, in order:
 * 1. A Messages error body (`{"type":"error","error":{"type","message"}}`) keeps its `error.type` (when
 *    it is one this library knows) and its message; the status stays the upstream's when it is an
 *    error status (400–599), else it becomes a non-retryable 502 as in the last row of the table.
 * 2. An OpenAI-style body (`{"error":{"message","type","code","param"}}`), including the loose variants
 *    real servers send (no `param`; a numeric `code`; OpenRouter's `metadata.raw` and `provider_name`;
 *    Qwen's extra ids; `{"error":"text"}`; FastAPI's `{"detail":…}`), gets its Messages type from the
 *    status, as in the table below.
 * 3. A body that is not JSON (an HTML page from a wrong base URL, a proxy's plain-text page, nothing at
 *    all) gets a message that says so and quotes the page's `<title>`, or the first 200 characters of
 *    its text with the tags stripped.
 *
 * | upstream                                                               | status | `error.type`            | retryable |
 * |------------------------------------------------------------------------|--------|-------------------------|-----------|
 * | 503, 529; `server_is_overloaded`/`slow_down`; other 5xx saying "overloaded" | 529 | `overloaded_error`      | yes       |
 * | 429 with code or type `insufficient_quota`                             | 402    | `billing_error`         | no        |
 * | 429, whatever its message says                                         | 429    | `rate_limit_error`      | yes       |
 * | 400, 422                                                               | 400    | `invalid_request_error` | no        |
 * | 408, 504                                                               | 504    | `timeout_error`         | yes       |
 * | 401, 402, 403, 404, 409, 413, 500, 502, other 4xx/5xx                  | same   | by status (A.8)         | by status |
 * | anything outside 400–599 (a redirect, a 200 that was not an answer)     | 502    | `api_error`             | no        |
 *
 * `insufficient_quota` becomes 402 rather than staying 429 because clients (the official SDKs, Claude
 * Code) retry every 429 whatever its body says, and an exhausted quota does not come back by retrying.
 * An `x-should-retry: true|false` header overrides `retryable`, as in the official SDKs.
 *
 * The message always starts with the upstream status, e.g.
 * `429 rate_limit_exceeded: Rate limit reached for gpt-4o-mini …`. A 400 that says the prompt does not
 * fit the context (llama.cpp's `exceed_context_size_error`, OpenAI's `context_length_exceeded`) also
 * says it in Anthropic's words, `prompt is too long: N tokens > M maximum`, before the upstream's own
 * (`describe-context-overflow.ts`).
 * `retryAfterMs` comes from `retry-after-ms`, else from `retry-after` in seconds (an HTTP-date value is
 * left to the caller, who has a clock; the header itself is kept in `headers`). `requestId` is the
 * `request-id` or `x-request-id` header, else the body's `request_id`.
 *
 * @example
 * mapUpstreamError({ status: 404, bodyText: '<html><title>404 Not Found</title>…', contentType: 'text/html', provider: 'tpx' })
 * // → MODEL_EHTTP 404 not_found_error: "upstream answered 404 Not Found with a text/html body, not JSON — is the base URL right? (404 Not Found)"
 */
export function mapUpstreamError(input: UpstreamErrorResponse): TransportError {
  const headers = lowerCaseKeys(input.headers);
  const upstreamStatus = input.status;
  const parsed = parseJson(input.bodyText);
  const body = parsed.ok ? parsed.value : undefined;

  let classification: Classification;
  let message: string;
  const messagesError = body === undefined ? undefined : readMessagesError(body);
  if (messagesError !== undefined) {
    // An error body under a status that is no error (a 200, a redirect) is the same broken answer as
    // any other there: 502 and not retryable, as in the table below, whatever type it claims.
    const isError = isErrorStatus(upstreamStatus);
    const status = isError ? upstreamStatus : 502;
    const type = MESSAGES_ERROR_TYPES.has(messagesError.type)
      ? (messagesError.type as MessagesErrorType)
      : errorTypeForStatus(status);
    classification = { status, type, retryable: isError && isRetryableStatus(status) };
    message = `${upstreamStatus} ${messagesError.type}: ${messagesError.message}`;
  } else if (parsed.ok) {
    const described = describeJsonError(parsed.value);
    const text = described?.message ?? excerpt(input.bodyText);
    classification = classify(upstreamStatus, described?.code, described?.type, text);
    const label = described?.code ?? described?.type ?? reasonPhrase(upstreamStatus);
    // A prompt over the context window is said in Anthropic's words too, so clients compact and retry.
    const overflow = classification.status === 400 ? describeContextOverflow(parsed.value) : undefined;
    message = `${upstreamStatus} ${label}: ${overflow === undefined ? '' : `${overflow}; `}${text}`;
  } else {
    const description = describeNonJsonBody(upstreamStatus, input.bodyText, input.contentType);
    classification = classify(upstreamStatus, undefined, undefined, description.text);
    message = description.message;
  }

  const shouldRetry = headers['x-should-retry'];
  const retryable =
    shouldRetry === 'true' ? true : shouldRetry === 'false' ? false : classification.retryable;
  const requestId =
    headers['request-id'] ??
    headers['x-request-id'] ??
    (isObject(body) && typeof body['request_id'] === 'string' ? body['request_id'] : undefined);
  const hint = parseRetryAfter(headers);
  const retryAfterMs = hint !== undefined && 'delayMs' in hint ? Math.round(hint.delayMs) : undefined;

  // DESIGN: MODEL_EAUTH covers both "no credentials" and "the provider refused them".
  const code = classification.status === 401 ? 'MODEL_EAUTH' : 'MODEL_EHTTP';
  return new TransportError(code, message, {
    status: classification.status,
    type: classification.type,
    retryable,
    provider: input.provider,
    ...(requestId !== undefined && requestId !== '' ? { requestId } : {}),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    headers: pickResponseHeaders(headers),
  });
}

interface Classification {
  status: number;
  type: MessagesErrorType;
  retryable: boolean;
}

/**
 * The status, Messages type and retryability for a non-Messages error answer (the D.7 table). What the
 * upstream states — its status, its error code — decides; the wording of its message is read only on a
 * generic 5xx, whose status says no more than "the server failed". A 429 stays a rate limit whatever its
 * message says ("overloaded", "context too long"): clients wait and retry a 429 by its rate-limit headers.
 */
function classify(
  upstreamStatus: number,
  code: string | undefined,
  upstreamType: string | undefined,
  text: string,
): Classification {
  if (!isErrorStatus(upstreamStatus)) return { status: 502, type: 'api_error', retryable: false };
  if (upstreamStatus === 429 && (code === 'insufficient_quota' || upstreamType === 'insufficient_quota')) {
    return { status: 402, type: 'billing_error', retryable: false };
  }
  const isOverloaded =
    upstreamStatus === 503 ||
    upstreamStatus === 529 ||
    (code !== undefined && OVERLOADED_CODES.has(code)) ||
    (upstreamStatus >= 500 && OVERLOADED_TEXT.test(text));
  if (isOverloaded) return { status: 529, type: 'overloaded_error', retryable: true };
  const status = upstreamStatus === 422 ? 400 : upstreamStatus === 408 ? 504 : upstreamStatus;
  return { status, type: errorTypeForStatus(status), retryable: isRetryableStatus(upstreamStatus) };
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(trimmed) as unknown };
  } catch {
    return { ok: false };
  }
}

function lowerCaseKeys(headers: Record<string, string> | undefined): Record<string, string | undefined> {
  const result: Record<string, string | undefined> = {};
  if (headers === undefined) return result;
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string') result[name.toLowerCase()] = value;
  }
  return result;
}
