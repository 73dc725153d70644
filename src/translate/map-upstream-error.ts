/**
 * Maps what a provider answers instead of a response — an error status with a body, or an error object
 * inside an HTTP 200 stream — to a `TransportError` (`MODEL_EHTTP`, or `MODEL_EAUTH` for a 401) whose `body` is a Messages error body
 * (PROTOCOLS.md A.8, B.5, D.7, and the loose error bodies of Part C quirks 17, 18 and 22).
 *
 * @module
 */
import { isObject } from '../protocol/is-object.js';
import {
  TransportError,
  errorTypeForStatus,
  isRetryableStatus,
  type MessagesErrorType,
  type ProviderName,
} from '../errors.js';
import { pickResponseHeaders } from './pick-response-headers.js';

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

const MESSAGES_ERROR_TYPES: ReadonlySet<string> = new Set<MessagesErrorType>([
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'conflict_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'timeout_error',
  'overloaded_error',
]);

/** OpenAI error codes that mean "the service is overloaded, try later" (B.5). */
const OVERLOADED_CODES: ReadonlySet<string> = new Set(['server_is_overloaded', 'slow_down']);
const OVERLOADED_TEXT = /overloaded|slow down/i;

const REASON_PHRASES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  529: 'Overloaded',
};

/** Longest piece of upstream text quoted in a message. */
const EXCERPT_LENGTH = 200;
/** Longest upstream detail (OpenRouter's `metadata.raw`) appended to a message. */
const DETAIL_LENGTH = 500;

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
 * | 503, 529; `server_is_overloaded`/`slow_down`; 429/5xx saying "overloaded" | 529 | `overloaded_error`      | yes       |
 * | 429 with code or type `insufficient_quota`                             | 402    | `billing_error`         | no        |
 * | 429                                                                    | 429    | `rate_limit_error`      | yes       |
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
 * `429 rate_limit_exceeded: Rate limit reached for gpt-4o-mini …`.
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
    message = `${upstreamStatus} ${label}: ${text}`;
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
  const retryAfterMs = parseRetryAfter(headers);

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

/**
 * The `TransportError` for an error that arrived inside an HTTP 200 stream, after the status line was
 * sent: an `error` member in an ordinary chunk (OpenRouter, quirk 17:
 * `{"error":{"code":400,"message":"Token limit reached"}}`), or the data of an `event: error` frame
 * (Groq, quirk 18: `{"error":{"message":…,"type":…,"code":"tool_use_failed","status_code":400}}`).
 * Accepts the chunk (with its `error` member), the error object itself, or a bare string.
 *
 * The Messages type (for the `error` event the caller sends) is `overloaded_error` when the upstream said
 * overloaded, slow down, 429, 503 or 529; else the type for its numeric status (`status_code`, `status`,
 * or a numeric `code`); else the upstream's own `type` when it is a Messages type; else `api_error`.
 *
 * @example
 * mapStreamErrorObject({ error: { code: 400, message: 'Token limit reached' } }, 'tpx')
 * // → MODEL_EHTTP 400 invalid_request_error: "upstream stream error 400: Token limit reached"
 */
export function mapStreamErrorObject(error: unknown, provider: UpstreamProvider): TransportError {
  const inner =
    isObject(error) && error['error'] !== undefined && error['error'] !== null ? error['error'] : error;
  let text: string;
  let status: number | undefined;
  let code: string | undefined;
  let upstreamType: string | undefined;
  if (typeof inner === 'string') {
    text = inner === '' ? 'the upstream reported an error without a message' : inner;
  } else if (isObject(inner)) {
    const described = describeErrorObject(inner);
    text = described.message ?? excerpt(safeStringify(inner));
    code = described.code;
    upstreamType = described.type;
    status = httpStatus(inner['status_code']) ?? httpStatus(inner['status']) ?? httpStatus(inner['code']);
  } else {
    text = excerpt(safeStringify(inner));
  }

  const isOverloaded =
    OVERLOADED_TEXT.test(text) ||
    (code !== undefined && OVERLOADED_CODES.has(code)) ||
    upstreamType === 'overloaded_error' ||
    status === 429 ||
    status === 503 ||
    status === 529;
  let type: MessagesErrorType;
  if (isOverloaded) type = 'overloaded_error';
  else if (status !== undefined) type = errorTypeForStatus(status);
  else if (upstreamType !== undefined && MESSAGES_ERROR_TYPES.has(upstreamType))
    type = upstreamType as MessagesErrorType;
  else type = 'api_error';
  const effectiveStatus = isOverloaded ? 529 : (status ?? 500);

  const prefix = ['upstream stream error', status, code].filter((part) => part !== undefined).join(' ');
  return new TransportError('MODEL_EHTTP', `${prefix}: ${text}`, {
    status: effectiveStatus,
    type,
    retryable: isRetryableStatus(effectiveStatus),
    provider,
  });
}

// ---------------------------------------------------------------------------------------------------

interface Classification {
  status: number;
  type: MessagesErrorType;
  retryable: boolean;
}

/** The status, Messages type and retryability for a non-Messages error answer (the D.7 table). */
function classify(
  upstreamStatus: number,
  code: string | undefined,
  upstreamType: string | undefined,
  text: string,
): Classification {
  if (!isErrorStatus(upstreamStatus)) return { status: 502, type: 'api_error', retryable: false };
  const isOverloaded =
    upstreamStatus === 503 ||
    upstreamStatus === 529 ||
    (code !== undefined && OVERLOADED_CODES.has(code)) ||
    ((upstreamStatus === 429 || upstreamStatus >= 500) && OVERLOADED_TEXT.test(text));
  if (isOverloaded) return { status: 529, type: 'overloaded_error', retryable: true };
  if (upstreamStatus === 429 && (code === 'insufficient_quota' || upstreamType === 'insufficient_quota')) {
    return { status: 402, type: 'billing_error', retryable: false };
  }
  const status = upstreamStatus === 422 ? 400 : upstreamStatus === 408 ? 504 : upstreamStatus;
  return { status, type: errorTypeForStatus(status), retryable: isRetryableStatus(upstreamStatus) };
}

interface DescribedError {
  message: string | undefined;
  code: string | undefined;
  type: string | undefined;
}

/** Reads a Messages error body, or `undefined` when the value is not one. */
function readMessagesError(value: unknown): { type: string; message: string } | undefined {
  if (!isObject(value) || value['type'] !== 'error') return undefined;
  const error = value['error'];
  if (!isObject(error) || typeof error['type'] !== 'string') return undefined;
  const message = typeof error['message'] === 'string' ? error['message'] : excerpt(safeStringify(error));
  return { type: error['type'], message };
}

/** Reads the loose error bodies OpenAI-compatible servers send; `undefined` when none is recognised. */
function describeJsonError(value: unknown): DescribedError | undefined {
  if (!isObject(value)) return undefined;
  const error = value['error'];
  if (isObject(error)) return describeErrorObject(error);
  if (typeof error === 'string' && error !== '') {
    return { message: error, code: stringCode(value['code']), type: nonEmptyString(value['type']) };
  }
  // FastAPI (vLLM and friends): {"detail": "…"} or {"detail": [{"loc": […], "msg": "…"}]} on 422.
  const detail = value['detail'];
  if (typeof detail === 'string' && detail !== '')
    return { message: detail, code: undefined, type: undefined };
  if (Array.isArray(detail) && detail.length > 0) {
    const parts = detail.slice(0, 3).map((item) => {
      if (!isObject(item)) return safeStringify(item);
      const location = Array.isArray(item['loc']) ? item['loc'].map(String).join('.') : undefined;
      const text = typeof item['msg'] === 'string' ? item['msg'] : safeStringify(item);
      return location === undefined ? text : `${location}: ${text}`;
    });
    return { message: parts.join('; '), code: undefined, type: undefined };
  }
  if (typeof value['message'] === 'string' && value['message'] !== '') {
    return {
      message: value['message'],
      code: stringCode(value['code']),
      type: nonEmptyString(value['type']),
    };
  }
  return undefined;
}

/** Reads one `{message, type, code, metadata}` error object (OpenAI, Groq, OpenRouter, Qwen). */
function describeErrorObject(error: Record<string, unknown>): DescribedError {
  let message = nonEmptyString(error['message']);
  // OpenRouter says "Provider returned error" and puts what the provider said in metadata.raw.
  const metadata = error['metadata'];
  if (isObject(metadata) && metadata['raw'] !== undefined && metadata['raw'] !== null) {
    const raw = typeof metadata['raw'] === 'string' ? metadata['raw'] : safeStringify(metadata['raw']);
    const providerName = nonEmptyString(metadata['provider_name']);
    const detail = truncate(providerName === undefined ? raw : `${providerName}: ${raw}`, DETAIL_LENGTH);
    message = message === undefined ? detail : `${message} (${detail})`;
  }
  return { message, code: stringCode(error['code']), type: nonEmptyString(error['type']) };
}

function describeNonJsonBody(
  status: number,
  bodyText: string,
  contentType: string | undefined,
): { message: string; text: string } {
  const statusText = `${status} ${reasonPhrase(status)}`.trimEnd();
  const trimmed = bodyText.trim();
  if (trimmed === '') return { message: `upstream answered ${statusText} with an empty body`, text: '' };
  const mediaType = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const looksLikeHtml = mediaType.includes('html') || /^<(!doctype|html|head|body|title)\b/i.test(trimmed);
  const text = looksLikeHtml ? htmlSummary(trimmed) : excerpt(trimmed);
  let message: string;
  if (mediaType.includes('json')) {
    message = `upstream answered ${statusText} with ${article(mediaType)} ${mediaType} body that is not valid JSON (${text})`;
  } else {
    const shown = mediaType !== '' ? mediaType : looksLikeHtml ? 'HTML' : 'non-JSON';
    const hint = looksLikeHtml || status === 404 || status === 405 ? ' — is the base URL right?' : '';
    message = `upstream answered ${statusText} with ${article(shown)} ${shown} body, not JSON${hint} (${text})`;
  }
  return { message, text };
}

/** The page's `<title>`, else its text with scripts, styles and tags removed; at most 200 characters. */
function htmlSummary(html: string): string {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  if (title !== undefined) {
    const cleaned = collapse(decodeEntities(title.replace(/<[^>]*>/g, ' ')));
    if (cleaned !== '') return truncate(cleaned, EXCERPT_LENGTH);
  }
  const text = html
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<[^>]*>/g, ' ');
  return truncate(collapse(decodeEntities(text)), EXCERPT_LENGTH);
}

function decodeEntities(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&');
}

/** "a" or "an" before a media type or "HTML" (said "aitch"). */
function article(word: string): string {
  return /^([aeiou]|html)/i.test(word) ? 'an' : 'a';
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function excerpt(text: string): string {
  return truncate(collapse(text), EXCERPT_LENGTH);
}

function truncate(text: string, length: number): string {
  return text.length <= length ? text : `${text.slice(0, length)}…`;
}

function reasonPhrase(status: number): string {
  return REASON_PHRASES[status] ?? '';
}

function isErrorStatus(status: number): boolean {
  return Number.isInteger(status) && status >= 400 && status <= 599;
}

/** An HTTP error status given as a number or a numeric string, else `undefined`. */
function httpStatus(value: unknown): number | undefined {
  const number = typeof value === 'string' && /^\d{3}$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && isErrorStatus(number) ? number : undefined;
}

/** A string error code; numeric codes (OpenRouter's `code: 429`) say nothing the status does not. */
function stringCode(value: unknown): string | undefined {
  return nonEmptyString(value);
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
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

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
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

/** The delay the upstream asked for, in milliseconds: `retry-after-ms`, else `retry-after` in seconds. */
function parseRetryAfter(headers: Record<string, string | undefined>): number | undefined {
  const milliseconds = headers['retry-after-ms']?.trim();
  if (milliseconds !== undefined && /^\d+(\.\d+)?$/.test(milliseconds))
    return Math.round(Number(milliseconds));
  const seconds = headers['retry-after']?.trim();
  if (seconds !== undefined && /^\d+(\.\d+)?$/.test(seconds)) return Math.round(Number(seconds) * 1000);
  return undefined;
}
