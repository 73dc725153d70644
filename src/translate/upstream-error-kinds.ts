/**
 * What an upstream error states, as the error mappers read it: the Messages error types, the codes that
 * mean overloaded or rate limited, and which statuses are errors.
 *
 * @module
 */
import type { MessagesErrorType } from '../errors.js';

/** The Messages `error.type` values this library knows. */
export const MESSAGES_ERROR_TYPES: ReadonlySet<string> = new Set<MessagesErrorType>([
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
export const OVERLOADED_CODES: ReadonlySet<string> = new Set(['server_is_overloaded', 'slow_down']);
export const OVERLOADED_TEXT = /overloaded|slow down/i;
/** OpenAI codes and types that name a rate limit (`type` is `requests` or `tokens` on a 429). */
export const RATE_LIMIT_CODES: ReadonlySet<string> = new Set(['rate_limit_exceeded', 'rate_limit_error']);

/** Whether a status is an HTTP error status (400–599). */
export function isErrorStatus(status: number): boolean {
  return Number.isInteger(status) && status >= 400 && status <= 599;
}

/** An HTTP error status given as a number or a numeric string, else `undefined`. */
export function httpStatus(value: unknown): number | undefined {
  const number = typeof value === 'string' && /^\d{3}$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && isErrorStatus(number) ? number : undefined;
}
