/**
 * Reads the error bodies upstreams send: the Messages shape, and the loose OpenAI-style ones.
 *
 * @module
 */
import { isObject } from '../protocol/is-object.js';
import { excerpt, safeStringify, truncate } from './quote-upstream-text.js';

/** Longest upstream detail (OpenRouter's `metadata.raw`) appended to a message. */
const DETAIL_LENGTH = 500;

export interface DescribedError {
  message: string | undefined;
  code: string | undefined;
  type: string | undefined;
}

/** Reads a Messages error body, or `undefined` when the value is not one. */
export function readMessagesError(value: unknown): { type: string; message: string } | undefined {
  if (!isObject(value) || value['type'] !== 'error') return undefined;
  const error = value['error'];
  if (!isObject(error) || typeof error['type'] !== 'string') return undefined;
  const message = typeof error['message'] === 'string' ? error['message'] : excerpt(safeStringify(error));
  return { type: error['type'], message };
}

/** Reads the loose error bodies OpenAI-compatible servers send; `undefined` when none is recognised. */
export function describeJsonError(value: unknown): DescribedError | undefined {
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
export function describeErrorObject(error: Record<string, unknown>): DescribedError {
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

/** A string error code; numeric codes (OpenRouter's `code: 429`) say nothing the status does not. */
function stringCode(value: unknown): string | undefined {
  return nonEmptyString(value);
}

export function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
