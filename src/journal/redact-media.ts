/**
 * Replaces the base64 data of images and documents in a request or answer body by its hash and size, so
 * that a journal of a session with screenshots stays small and holds no copy of the files themselves.
 *
 * | where the data is                                              | what it becomes |
 * |----------------------------------------------------------------|-----------------|
 * | a Messages `source` (`{"type":"base64","media_type":…,"data":…}`) | `data`: `"sha256:<hex>"`, plus `"bytes": <decoded size>` |
 * | any string that is a base64 `data:` URL (Chat Completions `image_url.url`, Responses `image_url` / `file_data`) | `"data:<type>;sha256=<hex>;bytes=<decoded size>"` |
 *
 * The rule is the same for every body, so a request replayed later is reduced the same way and still
 * matches its recording (see `mock-model/replay`). The value given is not changed: a copy is returned.
 *
 * @module
 */
import { createHash } from 'node:crypto';

/** What the journal keeps of media: its hash and size (`hash`, the default) or the data itself (`keep`). */
export type JournalMedia = 'hash' | 'keep';

/** Shortest base64 text worth replacing: below it, the hash would be longer than the data. */
const MIN_DATA_LENGTH = 64;
const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*);base64,/;

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The size in bytes of the data that base64 text decodes to. */
function decodedBytes(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return Math.floor((base64.length * 3) / 4) - padding;
}

function redactString(text: string): string {
  if (text.length < MIN_DATA_LENGTH || !text.startsWith('data:')) return text;
  const match = DATA_URL.exec(text);
  if (match === null) return text;
  const data = text.slice(match[0].length);
  return `data:${match[1] ?? ''};sha256=${sha256(data)};bytes=${decodedBytes(data)}`;
}

/** `value` with every piece of base64 media replaced by its hash and size (see the module comment). */
export function redactMedia(value: unknown): unknown {
  if (typeof value === 'string') return redactString(value);
  if (Array.isArray(value)) return value.map(redactMedia);
  if (typeof value !== 'object' || value === null) return value;
  const source = value as Record<string, unknown>;
  const data = source['data'];
  if (source['type'] === 'base64' && typeof data === 'string' && data.length >= MIN_DATA_LENGTH) {
    return { ...source, data: `sha256:${sha256(data)}`, bytes: decodedBytes(data) };
  }
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(source)) copy[key] = redactMedia(source[key]);
  return copy;
}
