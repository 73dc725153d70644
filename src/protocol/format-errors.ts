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

/** One finding: where (a JSON pointer into the checked value) and what is wrong there. */
interface Finding {
  pointer: string;
  message: string;
}

const ANY_OF = '/anyOf/';

/**
 * Picks the most specific errors and says each one once, with the path of the field at fault:
 *
 * - a missing property is reported at its own path (`model: is required`), not at its parent's;
 * - a union (`anyOf`) is reported once: when the value had the right outer shape for exactly one
 *   branch (a string-or-array field holding an array), that branch's own errors are reported;
 *   otherwise the alternatives are listed (`must be one of "user", "assistant"`, `must be string or
 *   array`).
 *
 * The validator's error list may be truncated (TypeBox buffers 8 by default), so unions are recognised
 * from the `anyOf` segments of each error's schema path, not from the `anyOf` summary error alone.
 *
 * `basePointer` is prepended to every path, for errors of a value checked on its own (one content block
 * of a request checked by its type's validator).
 *
 * @example
 * describeErrors(errors) // → 'messages[0].role: must be one of "user", "assistant", "system"'
 * describeErrors(errors, 1, '/messages/0/content/2') // → 'messages[0].content[2].id: is required'
 */
export function describeErrors(
  errors: readonly TLocalizedValidationError[],
  limit = 3,
  basePointer = '',
): string {
  const lines: string[] = [];
  for (const finding of explain(errors, 0)) {
    const line = `${formatPath(basePointer + finding.pointer)}: ${finding.message}`;
    if (lines.includes(line)) continue;
    lines.push(line);
    if (lines.length >= limit) break;
  }
  return lines.length > 0 ? lines.join('; ') : `${formatPath(basePointer)}: is invalid`;
}

interface UnionGroup {
  schemaPath: string;
  summary: TLocalizedValidationError | undefined;
  branches: Map<number, TLocalizedValidationError[]>;
}

/**
 * Explains `errors`, treating only unions whose `anyOf` segment starts at or after `from` in the schema
 * path as unresolved (the ones before it were resolved by the caller, which picked a branch).
 */
function explain(errors: readonly TLocalizedValidationError[], from: number): Finding[] {
  // Keep the order of first appearance: plain errors and union groups interleaved.
  const items: (TLocalizedValidationError | UnionGroup)[] = [];
  const groups = new Map<string, UnionGroup>();
  const groupFor = (schemaPath: string): UnionGroup => {
    let group = groups.get(schemaPath);
    if (group === undefined) {
      group = { schemaPath, summary: undefined, branches: new Map() };
      groups.set(schemaPath, group);
      items.push(group);
    }
    return group;
  };
  for (const error of errors) {
    const at = error.schemaPath.indexOf(ANY_OF, from);
    if (at === -1) {
      if (error.keyword === 'anyOf') groupFor(error.schemaPath).summary = error;
      else items.push(error);
      continue;
    }
    const branch = Number.parseInt(error.schemaPath.slice(at + ANY_OF.length), 10);
    const branches = groupFor(error.schemaPath.slice(0, at)).branches;
    const list = branches.get(branch);
    if (list === undefined) branches.set(branch, [error]);
    else list.push(error);
  }
  const findings: Finding[] = [];
  for (const item of items) {
    if ('branches' in item) findings.push(...explainUnion(item));
    else findings.push(...explainOne(item));
  }
  return findings;
}

function explainOne(error: TLocalizedValidationError): Finding[] {
  const params = error.params as { requiredProperties?: unknown; allowedValue?: unknown };
  if (error.keyword === 'required' && Array.isArray(params.requiredProperties)) {
    return params.requiredProperties.map((property) => ({
      pointer: `${error.instancePath}/${String(property).replaceAll('~', '~0').replaceAll('/', '~1')}`,
      message: 'is required',
    }));
  }
  if (error.keyword === 'const') {
    return [{ pointer: error.instancePath, message: `must be ${JSON.stringify(params.allowedValue)}` }];
  }
  return [{ pointer: error.instancePath, message: error.message }];
}

function explainUnion(group: UnionGroup): Finding[] {
  const all = [...group.branches.values()].flat();
  // Where the union sits in the value: the summary says so; without it (truncated list), the shallowest
  // error of any branch is at the union itself or below it.
  const pointer =
    group.summary?.instancePath ??
    all.reduce(
      (shortest, error) => (error.instancePath.length < shortest.length ? error.instancePath : shortest),
      all[0]?.instancePath ?? '',
    );
  // The value's branch: the one it failed only below the union's own level (a string-or-array field
  // holding an array with a bad item). A branch that rejected the value's `type` is never it.
  const below = `${pointer}/`;
  const discriminator = `${pointer}/type`;
  const deepBranches = [...group.branches].filter(([, branchErrors]) =>
    branchErrors.every(
      (error) =>
        error.instancePath.startsWith(below) &&
        !(error.instancePath === discriminator && error.keyword === 'const'),
    ),
  );
  if (deepBranches.length === 1) {
    const [index, branchErrors] = deepBranches[0]!;
    return explain(branchErrors, group.schemaPath.length + ANY_OF.length + String(index).length);
  }
  const here = all.filter((error) => error.instancePath === pointer);
  const constants = here
    .filter((error) => error.keyword === 'const')
    .map((error) => JSON.stringify((error.params as { allowedValue?: unknown }).allowedValue));
  const types = here
    .filter((error) => error.keyword === 'type')
    .map((error) => String((error.params as { type?: unknown }).type));
  const alternatives = [...new Set([...constants, ...types])];
  let message = 'has the wrong shape';
  if (types.length === 0 && constants.length > 0) message = `must be one of ${alternatives.join(', ')}`;
  else if (alternatives.length > 0) message = `must be ${alternatives.join(' or ')}`;
  return [{ pointer, message }];
}
