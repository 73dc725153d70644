/**
 * A `Content-Type` value's media type, compared as HTTP compares it: case-insensitively and without its
 * parameters (RFC 9110 §8.3.1), so `Text/Event-Stream; charset=UTF-8` is `text/event-stream`.
 *
 * @module
 */

/** The lower-case `type/subtype` of a `Content-Type` value (`''` for none). */
export function mediaTypeOf(contentType: string | undefined): string {
  if (contentType === undefined) return '';
  const semicolon = contentType.indexOf(';');
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

/** Whether a `Content-Type` value names an event stream. */
export function isEventStream(contentType: string | undefined): boolean {
  return mediaTypeOf(contentType) === 'text/event-stream';
}

/** Whether a `Content-Type` value names JSON: `application/json` or a `+json` type. */
export function isJson(contentType: string | undefined): boolean {
  const type = mediaTypeOf(contentType);
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}
