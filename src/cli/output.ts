/**
 * CLI output helpers: where text goes, and the documented exit codes.
 *
 * @module
 */

/** Exit codes: 0 ok, 1 the exchange failed, 2 usage or configuration error. */
export const EXIT_OK = 0;
export const EXIT_EXCHANGE_ERROR = 1;
export const EXIT_USAGE = 2;

/** Where a command writes. Injected so commands can be run in-process. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  readStdin: () => Promise<string>;
}

/** A usage error: printed with the command's help hint, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

/**
 * A setting given as `--flag` or as its environment variable (the flag wins; an empty variable counts
 * as unset), with the name the user wrote it under, for messages.
 */
export function flagOrVariable(
  values: Readonly<Record<string, unknown>>,
  flag: string,
  env: Record<string, string | undefined>,
  variable: string,
): { value: string; name: string } | undefined {
  const fromFlag = values[flag];
  if (typeof fromFlag === 'string') return { value: fromFlag, name: `--${flag}` };
  const fromEnv = env[variable];
  if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, name: variable };
  return undefined;
}
