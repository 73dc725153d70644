/**
 * Turns a compiled validator's errors into one sentence a person can act on.
 *
 * @module
 */
import type { TLocalizedValidationError } from 'typebox/error';

/** A JSON pointer (`/messages/0/role`) as the dotted path people read (`messages[0].role`). */
export function formatPath(pointer: string): string {
  if (pointer === '') return '(root)';
  let out = '';
  for (const raw of pointer.slice(1).split('/')) {
    const part = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    out += /^\d+$/.test(part) ? `[${part}]` : out === '' ? part : `.${part}`;
  }
  return out;
}

/**
 * Picks the most specific error: an `anyOf` of constants is reported as "must be one of …"; errors
 * produced inside a failed `anyOf` branch are folded into it, so the user sees one cause per field.
 *
 * @example
 * describeErrors(errors) // → 'messages[0].role: must be one of "user", "assistant", "system"'
 */
export function describeErrors(errors: readonly TLocalizedValidationError[], limit = 3): string {
  const anyOfPaths = new Set<string>();
  for (const error of errors) if (error.keyword === 'anyOf') anyOfPaths.add(error.schemaPath);
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    const insideAnyOf = [...anyOfPaths].some((path) => error.schemaPath.startsWith(`${path}/anyOf/`));
    if (insideAnyOf) continue;
    let message = error.message;
    if (error.keyword === 'anyOf') {
      const constants = errors
        .filter(
          (other) => other.keyword === 'const' && other.schemaPath.startsWith(`${error.schemaPath}/anyOf/`),
        )
        .map((other) => JSON.stringify((other.params as { allowedValue?: unknown }).allowedValue));
      const types = errors
        .filter(
          (other) =>
            other.keyword === 'type' &&
            other.instancePath === error.instancePath &&
            other.schemaPath.startsWith(`${error.schemaPath}/anyOf/`),
        )
        .map((other) => String((other.params as { type?: unknown }).type));
      if (constants.length > 0) message = `must be one of ${constants.join(', ')}`;
      else if (types.length > 0) message = `must be ${types.join(' or ')}`;
      else message = 'has the wrong shape';
    }
    const line = `${formatPath(error.instancePath)}: ${message}`;
    if (seen.has(line)) continue;
    seen.add(line);
    lines.push(line);
    if (lines.length >= limit) break;
  }
  return lines.join('; ');
}
