/**
 * The deadlines and counts an exchange runs under: the defaults, the transport's options over them, and
 * a call's options over those, each checked.
 *
 * @module
 */
import { TransportError } from '../errors.js';
import type { Deadlines } from './types.js';

/** Default deadlines, in milliseconds. */
export const DEFAULT_DEADLINES: Readonly<Deadlines> = Object.freeze({
  connectTimeoutMs: 10_000,
  firstByteTimeoutMs: 60_000,
  idleTimeoutMs: 120_000,
  timeoutMs: 600_000,
});

const DEADLINE_NAMES = ['connectTimeoutMs', 'firstByteTimeoutMs', 'idleTimeoutMs', 'timeoutMs'] as const;

/** Throws `MODEL_ECONFIG` unless `value` is absent or a whole number ≥ 0. */
export function checkCount(value: number | undefined, name: string): void {
  if (value !== undefined && (!Number.isInteger(value) || value < 0)) {
    throw new TransportError('MODEL_ECONFIG', `${name} must be a whole number ≥ 0, got ${String(value)}`);
  }
}

/** `base` with each deadline `overrides` gives; throws `MODEL_ECONFIG` for a negative or non-finite one. */
export function resolveDeadlines(base: Deadlines, overrides: Partial<Deadlines>): Deadlines {
  const deadlines = { ...base };
  for (const name of DEADLINE_NAMES) {
    const value = overrides[name];
    if (value === undefined) continue;
    if (!Number.isFinite(value) || value < 0) {
      throw new TransportError(
        'MODEL_ECONFIG',
        `${name} must be a number of milliseconds ≥ 0, got ${String(value)}`,
      );
    }
    deadlines[name] = value;
  }
  return deadlines;
}
