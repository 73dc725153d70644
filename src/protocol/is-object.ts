/**
 * Whether a value decoded from JSON is an object with named members: not `null` and not an array,
 * which `typeof` also calls "object". Every reader of untrusted JSON (requests, provider responses,
 * stream chunks, files) asks this before looking at a member.
 */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
