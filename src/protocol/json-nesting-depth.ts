/**
 * One pass over a JSON text, before or beside parsing it, for what `JSON.parse` cannot say:
 *
 * - **How deeply it nests.** `JSON.parse` itself copes with any depth, but everything that walks the
 *   parsed value afterwards (validators, translation, `JSON.stringify`) recurses, and 100,000 levels of
 *   `[` overflow the stack. A text nesting deeper than any real request or answer is therefore refused
 *   before it is parsed.
 * - **Whether a number in it may not survive a double** (see `exact-json.ts`): only numbers outside
 *   strings count, so a string of digits (an id, a phone number, a hash) never sends a text to the
 *   slower exact parser.
 *
 * Strings are skipped with `indexOf` (native, and most of a request or an answer is string content);
 * only what lies between them is looked at character by character.
 *
 * @module
 */

/** Deepest nesting accepted in a request or an upstream answer; real ones stay far below it. */
export const MAX_JSON_DEPTH = 256;

/** {@link scanJsonText}'s flag: the text opens more than the given depth of arrays and objects. */
export const JSON_TOO_DEEP = 1;
/** {@link scanJsonText}'s flag: a number outside strings may not survive a double (`exact-json.ts`). */
export const JSON_LONG_NUMBER = 2;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

/**
 * A number a double may change: 16 or more digits in a row (a decimal point allowed among them) or an
 * exponent of three digits. A number with at most 15 significant digits and an exponent under 100
 * always survives a double (IEEE 754 keeps 15 decimal digits, RFC 8259 §6).
 */
const MAY_LOSE_DIGITS = /(?:\d\.?){16}|[eE][+-]?\d{3}/;

/**
 * Where the string opened by the quote at `open` ends: the index of its closing quote, or -1 when it
 * never closes (malformed JSON, left for the parser to report). A quote is escaped when an odd number
 * of backslashes runs up to it.
 */
function closingQuote(text: string, open: number): number {
  let quote = text.indexOf('"', open + 1);
  while (quote !== -1) {
    let before = quote - 1;
    while (text.charCodeAt(before) === BACKSLASH) before--;
    if ((quote - 1 - before) % 2 === 0) return quote;
    quote = text.indexOf('"', quote + 1);
  }
  return -1;
}

function isNumberCharacter(code: number): boolean {
  return (
    (code >= DIGIT_0 && code <= DIGIT_9) ||
    code === DOT ||
    code === LOWER_E ||
    code === UPPER_E ||
    code === MINUS ||
    code === PLUS
  );
}

/**
 * Scans a JSON text once and returns its flags: {@link JSON_TOO_DEEP} when it opens more than
 * `maxDepth` arrays or objects inside one another, {@link JSON_LONG_NUMBER} when a number outside its
 * strings may not survive a double; `0` when neither. The scan stops at the first too-deep opening.
 * Brackets and digits inside strings do not count. Malformed JSON is left for the parser to report: the
 * flags then describe what was read up to where it went wrong.
 *
 * @example
 * scanJsonText('{"id":"12345678901234567890"}') // 0: those digits are a string
 * scanJsonText('{"id":12345678901234567890}') // JSON_LONG_NUMBER
 * scanJsonText('[[[1]]]', 2) // JSON_TOO_DEEP
 */
export function scanJsonText(text: string, maxDepth = MAX_JSON_DEPTH): number {
  const length = text.length;
  let flags = 0;
  let depth = 0;
  for (let index = 0; index < length; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      index = closingQuote(text, index);
      if (index === -1) break;
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > maxDepth) return flags | JSON_TOO_DEEP;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
      depth--;
    } else if ((code >= DIGIT_0 && code <= DIGIT_9) || code === MINUS) {
      let end = index + 1;
      while (end < length && isNumberCharacter(text.charCodeAt(end))) end++;
      // Fewer than five characters hold neither sixteen digits nor a three-digit exponent (`1e100`).
      if (end - index >= 5 && MAY_LOSE_DIGITS.test(text.slice(index, end))) flags |= JSON_LONG_NUMBER;
      index = end - 1;
    }
  }
  return flags;
}
