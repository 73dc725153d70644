/**
 * The mock model's HTTP plumbing: reading a request body within a size limit, and writing JSON answers,
 * OpenAI-shaped errors, scripted error statuses and SSE frames (with the reply's delay between frames).
 *
 * @module
 */
import { once } from 'node:events';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

const MAX_BODY_BYTES = 32 * 1024 * 1024;

/** Writes a JSON answer with its length. */
export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  const payload = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(payload)),
    ...headers,
  });
  response.end(payload);
}

/** Writes an OpenAI-shaped error: `{error: {message, type, param, code}}`. */
export function sendError(
  response: ServerResponse,
  status: number,
  message: string,
  type: string,
  param: string | null,
  code: string | null,
): void {
  sendJson(response, status, { error: { message, type, param, code } });
}

/** Writes a scripted error status: its body as JSON, or as plain text when the script gave a string. */
export function sendScriptedError(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>>,
): void {
  const isText = typeof body === 'string';
  response.writeHead(status, {
    'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json',
    ...headers,
  });
  response.end(isText ? body : JSON.stringify(body ?? null));
}

/**
 * Writes an event stream: the headers at once, then each frame (already formatted, blank line included),
 * `chunkDelayMs` apart, respecting back-pressure. Stops when `signal` aborts (the client left).
 */
export async function writeSseFrames(
  response: ServerResponse,
  frames: readonly string[],
  chunkDelayMs: number,
  headers: Readonly<Record<string, string>>,
  signal: AbortSignal,
): Promise<void> {
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    ...headers,
  });
  response.flushHeaders();
  for (const [index, frame] of frames.entries()) {
    if (index > 0 && chunkDelayMs > 0) await sleep(chunkDelayMs, undefined, { signal });
    signal.throwIfAborted();
    if (!response.write(frame)) await once(response, 'drain', { signal });
  }
  response.end();
}

/** The body as UTF-8 text, or `undefined` when it exceeds the size limit. */
export async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function parseJson(raw: string): { isJson: true; value: unknown } | { isJson: false } {
  try {
    return { isJson: true, value: JSON.parse(raw) as unknown };
  } catch {
    return { isJson: false };
  }
}

/** Header names in lower case; repeated headers joined with `, `. */
export function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}
