/**
 * Completes the JSON of a tool call that the output limit cut (`finish_reason: "length"`), by appending
 * only: the arguments a streamed call already sent cannot be taken back, so `send` and `stream` agree
 * only if both deliver the text as it came plus the same closing suffix. Pure.
 *
 * @module
 */

/** Where the scanner is, inside the innermost open container (or at the top level). */
type Expectation =
  | 'root' // nothing but whitespace so far
  | 'done' // the root object is closed
  | 'key-or-end' // after `{`
  | 'key' // after `,` in an object
  | 'colon' // after a key
  | 'value' // after `:` or `,` in an array
  | 'value-or-end' // after `[`
  | 'comma-or-end'; // after a value

/**
 * The suffix that makes `text`, a cut prefix of a JSON object, complete JSON: an open string is closed
 * (a dangling escape finished first: `\` as an escaped backslash, `\u12` padded with zeros), a cut
 * `true`/`false`/`null` is finished, a cut number gets the digit it lacks, a key without a value gets
 * `null` (a cut key that names a member already there gets `_` appended until it does not), as does a
 * value position left empty after `:` or after `,` in an array; an object cut right
 * after `,` gets the member `"": null` (or `"_"`, `"__"`… when that key is taken), and every open array
 * and object is closed.
 *
 * @example
 * completeCutJson('{')                      // → '}'
 * completeCutJson('{"city":"Par')           // → '"}'
 * completeCutJson('{"city":"Paris","un')    // → '":null}'
 * completeCutJson('{"a":[1,tr')             // → 'ue]}'
 * completeCutJson('{"a":1}')                // → ''
 *
 * @returns the suffix (`''` when `text` is already a complete object), or `undefined` when `text` is
 *   not the beginning of a JSON object (then no suffix can make it one).
 */
export function completeCutJson(text: string): string | undefined {
  const scanner = new CutJsonScanner(text);
  for (let position = 0; position < text.length; position++) {
    if (!scanner.read(position)) return undefined;
  }
  return scanner.suffix();
}

/**
 * Reads a text as it arrives, fragment by fragment, and says how much of it is certainly the beginning of
 * a JSON object. A stream shows a tool call's arguments live only that far: what follows a `,` is held
 * until the next value begins (a trailing comma is the most common defect of weak models, and repairing
 * it must not take back what was shown), as is whitespace before the object.
 */
export class JsonPrefixReader {
  readonly #scanner = new CutJsonScanner('');
  #isPrefix = true;

  /** Appends `fragment`; whether the whole text so far can still begin a JSON object. */
  append(fragment: string): boolean {
    if (!this.#isPrefix) return false;
    const start = this.#scanner.extend(fragment);
    for (let position = start; position < start + fragment.length; position++) {
      if (!this.#scanner.read(position)) {
        this.#isPrefix = false;
        return false;
      }
    }
    return true;
  }

  /** How many characters of the text so far may be shown (while it is a JSON prefix). */
  get safeLength(): number {
    return this.#scanner.safeLength;
  }
}

/** An open array or object; an object keeps the keys it has, so a repair never overwrites one. */
type Container = { kind: 'object'; keys: Set<string> } | { kind: 'array' };

/** A string being read: whether it is a key, where it began, and how far an escape has got. */
interface OpenString {
  isKey: boolean;
  start: number;
  escape: 'none' | 'backslash' | number;
}

/** Reads a cut JSON text one character at a time, then says what completes it. */
class CutJsonScanner {
  #text: string;
  /**
   * The text last appended and where it starts: characters are read from it, so that a text grown by
   * many small fragments is never copied whole to read one (indexing a string built by `+=` flattens it).
   */
  #piece: string;
  #pieceStart = 0;
  /** Where a `,` not yet followed by anything but whitespace stands. */
  #pendingComma: number | undefined;
  /** Each open container, outermost first. */
  readonly #containers: Container[] = [];
  #expectation: Expectation = 'root';
  #string: OpenString | undefined;
  /** A number or literal being read. */
  #scalar = '';

  constructor(text: string) {
    this.#text = text;
    this.#piece = text;
  }

  /** Appends `fragment` to the text, for reading on; returns where it starts. */
  extend(fragment: string): number {
    const start = this.#text.length;
    this.#text += fragment;
    this.#piece = fragment;
    this.#pieceStart = start;
    return start;
  }

  /** The length of the text that surely begins the object: none before `{`, none from a lone `,` on. */
  get safeLength(): number {
    if (this.#expectation === 'root') return 0;
    return this.#pendingComma ?? this.#text.length;
  }

  /** Reads the character at `position`; `false` when the text cannot be the beginning of a JSON object. */
  read(position: number): boolean {
    const character = this.#piece[position - this.#pieceStart]!;
    if (this.#string !== undefined) return this.#readInString(character, position);
    if (this.#scalar !== '') {
      if (/[0-9a-z.+-]/i.test(character)) {
        this.#scalar += character;
        return true;
      }
      if (!isCompleteScalar(this.#scalar)) return false;
      this.#scalar = '';
      this.#expectation = this.#afterValue();
    }
    if (/\s/.test(character)) return true;
    this.#pendingComma = undefined;
    return this.#readToken(character, position);
  }

  /** The suffix that completes what was read, or `undefined` when nothing can. */
  suffix(): string | undefined {
    let suffix = '';
    if (this.#string !== undefined) {
      suffix += this.#closeString(this.#string);
    } else if (this.#scalar !== '') {
      const completion = finishScalar(this.#scalar);
      if (completion === undefined) return undefined;
      suffix += completion;
      this.#expectation = this.#afterValue();
    }
    const filler = this.#fillExpectation();
    if (filler === undefined) return undefined;
    suffix += filler;
    for (let index = this.#containers.length - 1; index >= 0; index--) {
      suffix += this.#containers[index]!.kind === 'object' ? '}' : ']';
    }
    return suffix;
  }

  #afterValue(): Expectation {
    return this.#containers.length === 0 ? 'done' : 'comma-or-end';
  }

  /** The keys the innermost container has (none for an array or at the top level). */
  #takenKeys(): Set<string> {
    const innermost = this.#containers.at(-1);
    return innermost?.kind === 'object' ? innermost.keys : new Set<string>();
  }

  #readInString(character: string, position: number): boolean {
    const string = this.#string!;
    if (string.escape === 'backslash') {
      if (character === 'u') string.escape = 0;
      else if ('"\\/bfnrt'.includes(character)) string.escape = 'none';
      else return false;
    } else if (typeof string.escape === 'number') {
      if (!/[0-9a-fA-F]/.test(character)) return false;
      string.escape = string.escape === 3 ? 'none' : string.escape + 1;
    } else if (character === '\\') {
      string.escape = 'backslash';
    } else if (character < ' ') {
      // A raw control character (a newline, mostly) is not JSON: no suffix mends it, a repair does.
      return false;
    } else if (character === '"') {
      if (string.isKey) {
        this.#expectation = 'colon';
        const innermost = this.#containers.at(-1);
        if (innermost?.kind === 'object') {
          innermost.keys.add(JSON.parse(this.#text.slice(string.start, position + 1)) as string);
        }
      } else {
        this.#expectation = this.#afterValue();
      }
      this.#string = undefined;
    }
    return true;
  }

  /** Reads a character outside strings and scalars, as what the scanner expects there allows. */
  #readToken(character: string, position: number): boolean {
    switch (this.#expectation) {
      case 'root':
        if (character !== '{') return false;
        this.#containers.push({ kind: 'object', keys: new Set() });
        this.#expectation = 'key-or-end';
        return true;
      case 'done':
        return false;
      case 'key-or-end':
      case 'key':
        return this.#readKeyOrEnd(character, position);
      case 'colon':
        if (character !== ':') return false;
        this.#expectation = 'value';
        return true;
      case 'value':
      case 'value-or-end':
        return this.#readValueOrEnd(character);
      case 'comma-or-end':
        return this.#readCommaOrEnd(character, position);
      default: {
        const unknown: never = this.#expectation;
        return unknown;
      }
    }
  }

  #readKeyOrEnd(character: string, position: number): boolean {
    if (character === '"') {
      this.#string = { isKey: true, start: position, escape: 'none' };
      return true;
    }
    if (character !== '}' || this.#expectation !== 'key-or-end') return false;
    this.#closeContainer();
    return true;
  }

  #readValueOrEnd(character: string): boolean {
    if (character === ']' && this.#expectation === 'value-or-end') {
      this.#closeContainer();
      return true;
    }
    const next = this.#startValue(character);
    if (next === undefined) return false;
    this.#expectation = next;
    return true;
  }

  #readCommaOrEnd(character: string, position: number): boolean {
    const innermost = this.#containers.at(-1)?.kind;
    if (character === ',') {
      this.#pendingComma = position;
      this.#expectation = innermost === 'object' ? 'key' : 'value';
      return true;
    }
    if ((character === '}' && innermost === 'object') || (character === ']' && innermost === 'array')) {
      this.#closeContainer();
      return true;
    }
    return false;
  }

  #closeContainer(): void {
    this.#containers.pop();
    this.#expectation = this.#afterValue();
  }

  /** Starts the value `character` opens; returns what comes next, or `undefined` for no value. */
  #startValue(character: string): Expectation | undefined {
    if (character === '"') {
      this.#string = { isKey: false, start: 0, escape: 'none' };
    } else if (character === '{') {
      this.#containers.push({ kind: 'object', keys: new Set() });
      return 'key-or-end';
    } else if (character === '[') {
      this.#containers.push({ kind: 'array' });
      return 'value-or-end';
    } else if (/[-0-9tfn]/.test(character)) {
      this.#scalar = character;
    } else {
      return undefined;
    }
    // Inside a string or scalar; what follows it is decided when it ends.
    return 'value';
  }

  /** What closes an open string: its dangling escape finished, the quote, and for a key a `null` value. */
  #closeString(string: OpenString): string {
    let suffix = '';
    if (string.escape === 'backslash') suffix += '\\';
    else if (typeof string.escape === 'number') suffix += '0'.repeat(4 - string.escape);
    if (!string.isKey) {
      this.#expectation = this.#afterValue();
      return `${suffix}"`;
    }
    // A cut key is still open, so it can be lengthened: when what was written of it names a key the
    // object already has, underscores keep the repair from overwriting that member.
    const written = JSON.parse(`${this.#text.slice(string.start)}${suffix}"`) as string;
    const taken = this.#takenKeys();
    let extra = '';
    while (taken.has(written + extra)) extra += '_';
    this.#expectation = 'comma-or-end';
    return `${suffix}${extra}":null`;
  }

  /** What fills the position the text was cut at, or `undefined` when the text held no object at all. */
  #fillExpectation(): string | undefined {
    switch (this.#expectation) {
      case 'root':
        return undefined;
      case 'colon':
        return ':null';
      case 'value':
        return 'null';
      case 'key': {
        const taken = this.#takenKeys();
        let key = '';
        while (taken.has(key)) key += '_';
        return `${JSON.stringify(key)}:null`;
      }
      case 'done':
      case 'key-or-end':
      case 'value-or-end':
      case 'comma-or-end':
        return '';
      default: {
        const unknown: never = this.#expectation;
        return unknown;
      }
    }
  }
}

const LITERALS = ['true', 'false', 'null'];
const COMPLETE_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

function isCompleteScalar(scalar: string): boolean {
  return LITERALS.includes(scalar) || COMPLETE_NUMBER.test(scalar);
}

/** What a cut number or literal lacks, or `undefined` when it is not the beginning of one. */
function finishScalar(scalar: string): string | undefined {
  if (isCompleteScalar(scalar)) return '';
  const literal = LITERALS.find((candidate) => candidate.startsWith(scalar));
  if (literal !== undefined) return literal.slice(scalar.length);
  // A number cut after `-`, `.`, `e`, or the exponent's sign: one digit completes it.
  return COMPLETE_NUMBER.test(`${scalar}0`) ? '0' : undefined;
}
