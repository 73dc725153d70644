/**
 * The error for upstream data this library cannot read (`MODEL_EPROTO`), and how its messages describe
 * the values they quote. Shared by every decoder of both wires.
 *
 * @module
 */
import { TransportError } from '../errors.js';

/** Longest excerpt of upstream data an error message quotes. */
const EXCERPT_LENGTH = 100;

/** A `MODEL_EPROTO` error for upstream data this library cannot read. */
export function protocolError(message: string, cause?: unknown): TransportError {
  return new TransportError(
    'MODEL_EPROTO',
    `unintelligible upstream answer: ${message}`,
    cause === undefined ? { provider: 'tpx' } : { provider: 'tpx', cause },
  );
}

/** A value's type as an error message names it: `null`, `an array`, `an object`, `a number`. */
export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return type === 'object' ? 'an object' : `a ${type}`;
}

/** Upstream text as an error message quotes it: JSON-quoted, cut after 100 characters. */
export function excerpt(text: string): string {
  const shown = text.length <= EXCERPT_LENGTH ? text : `${text.slice(0, EXCERPT_LENGTH)}…`;
  return JSON.stringify(shown);
}

/** An upstream value as an error message quotes it: its JSON, as {@link excerpt} quotes text. */
export function excerptOf(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return excerpt(text);
}

/** A non-empty string, else `undefined`: how decoders read an optional string field of upstream data. */
export function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
