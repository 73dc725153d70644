/**
 * One compiled validator, reduced to what this library needs: a fast boolean check, and the errors
 * (computed only when the check failed, since computing them is slow).
 *
 * @module
 */
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import type { TLocalizedValidationError } from 'typebox/error';

export interface Checker {
  check(value: unknown): boolean;
  errors(value: unknown): TLocalizedValidationError[];
}

/** Compiles a schema once (TypeBox's JIT compiler) into a `Checker`. */
export function compileChecker(schema: TSchema): Checker {
  const validator = Compile(schema);
  return {
    check: (value) => validator.Check(value),
    errors: (value) => validator.Errors(value),
  };
}
