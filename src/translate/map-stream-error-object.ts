/**
 * Maps an error object that arrived inside an HTTP 200 stream to a `TransportError`.
 *
 * @module
 */
import { TransportError, errorTypeForStatus, isRetryableStatus, type MessagesErrorType } from '../errors.js';
import { isObject } from '../protocol/is-object.js';
import { describeErrorObject } from './describe-json-error.js';
import type { UpstreamProvider } from './map-upstream-error.js';
import { excerpt, safeStringify } from './quote-upstream-text.js';
import {
  MESSAGES_ERROR_TYPES,
  OVERLOADED_CODES,
  OVERLOADED_TEXT,
  RATE_LIMIT_CODES,
  httpStatus,
} from './upstream-error-kinds.js';

/**
 * The `TransportError` for an error that arrived inside an HTTP 200 stream, after the status line was
 * sent: an `error` member in an ordinary chunk (OpenRouter, quirk 17:
 * `{"error":{"code":400,"message":"Token limit reached"}}`), or the data of an `event: error` frame
 * (Groq, quirk 18: `{"error":{"message":…,"type":…,"code":"tool_use_failed","status_code":400}}`).
 * Accepts the chunk (with its `error` member), the error object itself, or a bare string.
 *
 * The Messages type (for the `error` event the caller sends) is `rate_limit_error` (429) for a stated 429
 * or a rate-limit code or type; `overloaded_error` (529) for a stated 503 or 529, an overload code or
 * type, or — when neither a status below 500 nor a Messages type was stated — a message saying overloaded
 * or slow down; else the type for its numeric status (`status_code`, `status`, or a numeric `code`); else
 * the upstream's own `type` when it is a Messages type; else `api_error`.
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

  // What the upstream states decides, as for an error status: an explicit status, then an explicit
  // code or type; the message's wording only when neither says more than "failed".
  const statedType = upstreamType !== undefined && MESSAGES_ERROR_TYPES.has(upstreamType);
  const isRateLimit =
    status === 429 ||
    (status === undefined &&
      (upstreamType === 'rate_limit_error' ||
        (code !== undefined && RATE_LIMIT_CODES.has(code)) ||
        (upstreamType !== undefined && RATE_LIMIT_CODES.has(upstreamType))));
  const isOverloaded =
    !isRateLimit &&
    ((code !== undefined && OVERLOADED_CODES.has(code)) ||
      upstreamType === 'overloaded_error' ||
      status === 503 ||
      status === 529 ||
      ((status === undefined || status >= 500) && !statedType && OVERLOADED_TEXT.test(text)));
  let type: MessagesErrorType;
  if (isRateLimit) type = 'rate_limit_error';
  else if (isOverloaded) type = 'overloaded_error';
  else if (status !== undefined) type = errorTypeForStatus(status);
  else if (statedType) type = upstreamType as MessagesErrorType;
  else type = 'api_error';
  const effectiveStatus = isRateLimit ? 429 : isOverloaded ? 529 : (status ?? 500);

  const prefix = ['upstream stream error', status, code].filter((part) => part !== undefined).join(' ');
  return new TransportError('MODEL_EHTTP', `${prefix}: ${text}`, {
    status: effectiveStatus,
    type,
    retryable: isRetryableStatus(effectiveStatus),
    provider,
  });
}
