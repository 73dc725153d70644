/**
 * One compiled validator, reduced to what this library needs: a fast boolean check, and the errors
 * (computed only when the check failed, since computing them is slow).
 *
 * @module
 */
import Type, { type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import type { TLocalizedValidationError } from 'typebox/error';
import { describeErrors } from './format-errors.js';
import type { Validated } from './validate-messages.js';

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

/**
 * A validator for wire values of type `T`: the value itself when it fits `schema`, else a message that
 * names what does not fit (`choices[0].message: must be object`). The schema is compiled once.
 */
export function compileValidator<T>(schema: TSchema): (value: unknown) => Validated<T> {
  const checker = compileChecker(schema);
  return (value) =>
    checker.check(value)
      ? { ok: true, value: value as T }
      : { ok: false, message: describeErrors(checker.errors(value)) };
}

/**
 * A field an OpenAI-compatible server may leave out or send as `null` (both mean absent to the
 * translators): the looseness both wires' answer validators need.
 */
export const Maybe = (schema: TSchema) => Type.Optional(Type.Union([schema, Type.Null()]));

/** A token count, present or not (`null` included). */
export const Count = () => Maybe(Type.Number());
