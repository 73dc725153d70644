/**
 * Flag parsing shared by the commands (node's `util.parseArgs`, strict), and the one-line form of an
 * error the commands print.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { isTransportError } from '../errors.js';
import { UsageError } from './output.js';

/** The flags a command accepts. */
export type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

/** Parsed flags and positionals. */
export interface ParsedArgs {
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  positionals: string[];
}

/** Parses `args` strictly (`--help` / `-h` always accepted); an unknown flag is a `UsageError`. */
export function parse(args: string[], options: OptionSpec, allowPositionals: boolean): ParsedArgs {
  try {
    const parsed = parseArgs({
      args,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals,
      strict: true,
    });
    return { values: parsed.values, positionals: parsed.positionals };
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** A `--port` value, or `fallback` when not given. */
export function parsePort(value: unknown, fallback: number): number {
  if (value === undefined || typeof value !== 'string') return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port must be a whole number from 0 to 65535, got ${value}`);
  return port;
}

/** An error in one line: `MODEL_ETRANSPORT (502): …` for transport errors. */
export function describeError(error: unknown): string {
  if (isTransportError(error)) return `${error.code} (${error.status}): ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}
