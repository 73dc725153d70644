/**
 * How upstream text is quoted in an error message: whitespace collapsed, cut to a length.
 *
 * @module
 */

/** Longest piece of upstream text quoted in a message. */
export const EXCERPT_LENGTH = 200;

export function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

export function excerpt(text: string): string {
  return truncate(collapse(text), EXCERPT_LENGTH);
}

export function truncate(text: string, length: number): string {
  return text.length <= length ? text : `${text.slice(0, length)}…`;
}

/** JSON text of any value, or its `String` form when it has none. */
export function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
