/**
 * How deeply a JSON text nests, found without parsing it. `JSON.parse` itself copes with any depth, but
 * everything that walks the parsed value afterwards (validators, translation, `JSON.stringify`) recurses,
 * and 100,000 levels of `[` overflow the stack. A text nesting deeper than any real request or answer is
 * therefore refused before it is parsed.
 *
 * @module
 */

/** Deepest nesting accepted in a request or an upstream answer; real ones stay far below it. */
export const MAX_JSON_DEPTH = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * Whether the JSON text (as UTF-8 bytes or a string) opens more than `maxDepth` arrays or objects inside
 * one another. Brackets inside strings do not count. Malformed JSON is left for the parser to report.
 */
export function exceedsJsonDepth(text: Uint8Array | string, maxDepth = MAX_JSON_DEPTH): boolean {
  const isString = typeof text === 'string';
  const length = text.length;
  let depth = 0;
  let inString = false;
  for (let index = 0; index < length; index++) {
    const code = isString ? text.charCodeAt(index) : text[index]!;
    if (inString) {
      if (code === BACKSLASH) index++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > maxDepth) return true;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}
