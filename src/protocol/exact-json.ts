/**
 * JSON numbers kept as written. `JSON.parse` turns every number into a double: an integer beyond 2^53
 * (`12345678901234567890123`) is rounded and `1e400` becomes `Infinity`, which `JSON.stringify` then
 * writes as `null`. A tool's input is the model's or the caller's data, not ours to round, so where the
 * translation parses and writes JSON again (tool inputs ⇄ function arguments, the proxy's bodies) a
 * number a double cannot hold exactly is kept as an {@link ExactNumber}: its text, written back as is.
 *
 * Every other number stays a plain `number`, and text without a number that could lose anything is
 * parsed by `JSON.parse` alone (a scan that skips strings decides, `scanJsonText`), so the usual case
 * costs little.
 *
 * @module
 */
import { parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';
import { JSON_LONG_NUMBER, scanJsonText } from './json-nesting-depth.js';

/**
 * A JSON number a double cannot hold exactly (an integer beyond 2^53, more significant digits than a
 * double keeps, an exponent past its range), kept as the text it was written as. `toJSON()` gives the
 * nearest double (what `JSON.stringify` alone would write), `valueOf()` the same for arithmetic, and
 * `text` the number exactly; the transport's own serialisation writes `text`.
 */
export class ExactNumber {
  /**
   * Whether any exact number was ever made in this process: until one is, nothing can hold one, and
   * serialising skips looking for them. A shortcut only: the output is the same either way.
   */
  static #made = false;

  /** The number as written, a valid JSON number. */
  readonly text: string;

  constructor(text: string) {
    this.text = text;
    ExactNumber.#made = true;
  }

  /** @internal Whether {@link ExactNumber.constructor} ever ran. */
  static get anyMade(): boolean {
    return ExactNumber.#made;
  }

  valueOf(): number {
    return Number(this.text);
  }

  toString(): string {
    return this.text;
  }

  toJSON(): number {
    return Number(this.text);
  }
}

/**
 * A decimal number's value as one canonical text: sign, significant digits, and where the decimal point
 * falls among them (`1.50`, `15e-1` and `0.15e1` all give `15e1`).
 */
function canonicalDecimal(text: string): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (match === null) return text;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match;
  let digits = whole + fraction;
  let point = whole.length + Number(exponent);
  const leadingZeros = /^0*/.exec(digits)![0].length;
  digits = digits.slice(leadingZeros).replace(/0+$/, '');
  point -= leadingZeros;
  return digits === '' ? '0' : `${sign}${digits}e${point}`;
}

/**
 * A number token as a plain number when the double it reads as writes back as the same value (the
 * shortest text of a double always does: `0.1`, `2^53`, `5.28e134`), else as an {@link ExactNumber}.
 */
function parseNumber(text: string): number | ExactNumber {
  const value = Number(text);
  if (Number.isFinite(value) && canonicalDecimal(String(value)) === canonicalDecimal(text)) return value;
  return new ExactNumber(text);
}

/**
 * Parses JSON text like `JSON.parse` (and throws what it throws), except that a number a double cannot
 * hold exactly becomes an {@link ExactNumber}. `flags`: what `scanJsonText` said of this text, when the
 * caller has scanned it already (to check its depth); else it is scanned here.
 */
export function parseExactJson(text: string, flags?: number): unknown {
  const value: unknown = JSON.parse(text);
  if (((flags ?? scanJsonText(text, Infinity)) & JSON_LONG_NUMBER) === 0) return value;
  try {
    return parseLossless(text, null, parseNumber);
  } catch {
    // JSON.parse took it, so this is what the exact parser refuses beyond it: a key repeated with
    // another value, where JSON.parse keeps the last. Then the numbers are JSON.parse's too.
    return value;
  }
}

/** Whether `value` holds an {@link ExactNumber} anywhere (walked without recursion). */
function holdsExactNumber(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next !== 'object' || next === null) continue;
    if (next instanceof ExactNumber) return true;
    if (Array.isArray(next)) {
      for (const item of next) if (typeof item === 'object' && item !== null) pending.push(item);
    } else {
      for (const key in next) {
        const item = (next as Record<string, unknown>)[key];
        if (typeof item === 'object' && item !== null) pending.push(item);
      }
    }
  }
  return false;
}

const EXACT_NUMBER_WRITER = [
  {
    test: (value: unknown) => value instanceof ExactNumber,
    stringify: (value: unknown) => (value as ExactNumber).text,
  },
];

/**
 * Writes `value` as JSON like `JSON.stringify`, except that each {@link ExactNumber} is written as the
 * text it was read as.
 */
export function stringifyExactJson(value: unknown): string {
  if (ExactNumber.anyMade && holdsExactNumber(value)) {
    return stringifyLossless(value, undefined, undefined, EXACT_NUMBER_WRITER) ?? 'null';
  }
  return JSON.stringify(value);
}
