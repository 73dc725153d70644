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
  // Each open container; an object keeps the keys it has, so a repair never overwrites one.
  const containers: ({ kind: 'object'; keys: Set<string> } | { kind: 'array' })[] = [];
  let expectation: Expectation = 'root';
  /** Inside a string: whether it is a key, and how far an escape has got. */
  let string: { isKey: boolean; start: number; escape: 'none' | 'backslash' | number } | undefined;
  /** A number or literal being read. */
  let scalar = '';

  const afterValue = (): Expectation => (containers.length === 0 ? 'done' : 'comma-or-end');

  for (let position = 0; position < text.length; position++) {
    const character = text[position]!;
    if (string !== undefined) {
      if (string.escape === 'backslash') {
        if (character === 'u') string.escape = 0;
        else if ('"\\/bfnrt'.includes(character)) string.escape = 'none';
        else return undefined;
      } else if (typeof string.escape === 'number') {
        if (!/[0-9a-fA-F]/.test(character)) return undefined;
        string.escape = string.escape === 3 ? 'none' : string.escape + 1;
      } else if (character === '\\') {
        string.escape = 'backslash';
      } else if (character === '"') {
        if (string.isKey) {
          expectation = 'colon';
          const innermost = containers.at(-1);
          if (innermost?.kind === 'object') {
            innermost.keys.add(JSON.parse(text.slice(string.start, position + 1)) as string);
          }
        } else {
          expectation = afterValue();
        }
        string = undefined;
      }
      continue;
    }
    if (scalar !== '') {
      if (/[0-9a-z.+-]/i.test(character)) {
        scalar += character;
        continue;
      }
      if (!isCompleteScalar(scalar)) return undefined;
      scalar = '';
      expectation = afterValue();
    }
    if (/\s/.test(character)) continue;
    switch (expectation) {
      case 'root':
        if (character !== '{') return undefined;
        containers.push({ kind: 'object', keys: new Set() });
        expectation = 'key-or-end';
        break;
      case 'done':
        return undefined;
      case 'key-or-end':
      case 'key':
        if (character === '"') string = { isKey: true, start: position, escape: 'none' };
        else if (character === '}' && expectation === 'key-or-end') {
          containers.pop();
          expectation = afterValue();
        } else return undefined;
        break;
      case 'colon':
        if (character !== ':') return undefined;
        expectation = 'value';
        break;
      case 'value':
      case 'value-or-end':
        if (character === ']' && expectation === 'value-or-end') {
          containers.pop();
          expectation = afterValue();
        } else {
          const next = startValue(character);
          if (next === undefined) return undefined;
          expectation = next;
        }
        break;
      case 'comma-or-end': {
        const innermost = containers.at(-1)?.kind;
        if (character === ',') expectation = innermost === 'object' ? 'key' : 'value';
        else if (character === '}' && innermost === 'object') {
          containers.pop();
          expectation = afterValue();
        } else if (character === ']' && innermost === 'array') {
          containers.pop();
          expectation = afterValue();
        } else return undefined;
        break;
      }
      default: {
        const unknown: never = expectation;
        return unknown;
      }
    }
  }

  /** Starts the value `character` opens; returns what comes next, or `undefined` for no value. */
  function startValue(character: string): Expectation | undefined {
    if (character === '"') {
      string = { isKey: false, start: 0, escape: 'none' };
    } else if (character === '{') {
      containers.push({ kind: 'object', keys: new Set() });
      return 'key-or-end';
    } else if (character === '[') {
      containers.push({ kind: 'array' });
      return 'value-or-end';
    } else if (/[-0-9tfn]/.test(character)) {
      scalar = character;
    } else {
      return undefined;
    }
    // Inside a string or scalar; what follows it is decided when it ends.
    return 'value';
  }

  let suffix = '';
  if (string !== undefined) {
    if (string.escape === 'backslash') suffix += '\\';
    else if (typeof string.escape === 'number') suffix += '0'.repeat(4 - string.escape);
    if (string.isKey) {
      // A cut key is still open, so it can be lengthened: when what was written of it names a key the
      // object already has, underscores keep the repair from overwriting that member.
      const written = JSON.parse(`${text.slice(string.start)}${suffix}"`) as string;
      const innermost = containers.at(-1);
      const taken = innermost?.kind === 'object' ? innermost.keys : new Set<string>();
      let extra = '';
      while (taken.has(written + extra)) extra += '_';
      suffix += `${extra}":null`;
      expectation = 'comma-or-end';
    } else {
      suffix += '"';
      expectation = afterValue();
    }
  } else if (scalar !== '') {
    const completion = finishScalar(scalar);
    if (completion === undefined) return undefined;
    suffix += completion;
    expectation = afterValue();
  }
  switch (expectation) {
    case 'root':
      return undefined;
    case 'colon':
      suffix += ':null';
      break;
    case 'value':
      suffix += 'null';
      break;
    case 'key': {
      const innermost = containers.at(-1);
      const taken = innermost?.kind === 'object' ? innermost.keys : new Set<string>();
      let key = '';
      while (taken.has(key)) key += '_';
      suffix += `${JSON.stringify(key)}:null`;
      break;
    }
    case 'done':
    case 'key-or-end':
    case 'value-or-end':
    case 'comma-or-end':
      break;
    default: {
      const unknown: never = expectation;
      return unknown;
    }
  }
  for (let index = containers.length - 1; index >= 0; index--) {
    suffix += containers[index]!.kind === 'object' ? '}' : ']';
  }
  return suffix;
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
