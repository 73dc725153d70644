/**
 * The bytes an answer came in, kept beside the value parsed from them, so that a relay can send a
 * validated native answer on as it arrived instead of serialising the parsed copy again (the native
 * path's largest avoidable cost per exchange). Kept in a `WeakMap`: the value itself is not touched,
 * and the text goes when the value does.
 *
 * @module
 */

const RAW_JSON = new WeakMap<object, string>();

/** Records that `value` was parsed from `text`, and validated as it is. */
export function rememberRawJson(value: object, text: string): void {
  RAW_JSON.set(value, text);
}

/** The JSON text `value` was parsed from, when it is known and `value` is unchanged since. */
export function rawJsonOf(value: object): string | undefined {
  return RAW_JSON.get(value);
}
