/**
 * Running a token command with the platform shell, bounded by a timeout and an output size, and
 * describing how it ended: its trimmed output, or a reason that quotes at most the first line of stderr.
 *
 * @module
 */
import { exec, spawnSync } from 'node:child_process';

/** How a command ended: its trimmed output, or why there is none. */
export type CommandResult = { ok: true; output: string } | { ok: false; reason: string };

/** Largest command output accepted (a token is a few KiB at most). */
const MAX_COMMAND_OUTPUT_BYTES = 1024 * 1024;

/** The first line of a command's stderr, shortened, for an error message. */
function stderrHint(stderr: string): string {
  const line = stderr.trim().split(/\r?\n/, 1)[0] ?? '';
  if (line === '') return '';
  return `: ${JSON.stringify(line.length > 200 ? `${line.slice(0, 200)}…` : line)}`;
}

function outcome(
  output: string,
  stderr: string,
  exit: { code: number | null; signal: string | null; timedOut: boolean; failure: string | undefined },
  timeoutMs: number,
): CommandResult {
  if (exit.timedOut) return { ok: false, reason: `did not finish within ${timeoutMs} ms` };
  if (exit.failure !== undefined) return { ok: false, reason: `could not be run (${exit.failure})` };
  if (exit.signal !== null) return { ok: false, reason: `was killed by ${exit.signal}${stderrHint(stderr)}` };
  if (exit.code !== 0)
    return { ok: false, reason: `exited with code ${String(exit.code)}${stderrHint(stderr)}` };
  const token = output.trim();
  if (token === '') return { ok: false, reason: `printed nothing on stdout${stderrHint(stderr)}` };
  return { ok: true, output: token };
}

/** Runs `command` with the platform shell, synchronously (start-up only). */
export function runShellCommandSync(command: string, timeoutMs: number): CommandResult {
  const result = spawnSync(command, {
    shell: true,
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: MAX_COMMAND_OUTPUT_BYTES,
    stdio: ['ignore', 'pipe', 'pipe'],
    windowsHide: true,
  });
  const errorCode = (result.error as { code?: string } | undefined)?.code;
  return outcome(
    result.stdout ?? '',
    result.stderr ?? '',
    {
      code: result.status,
      signal: result.signal,
      timedOut: errorCode === 'ETIMEDOUT',
      failure: result.error === undefined ? undefined : (errorCode ?? result.error.message),
    },
    timeoutMs,
  );
}

/** Runs `command` with the platform shell. */
export function runShellCommand(command: string, timeoutMs: number): Promise<CommandResult> {
  return new Promise((resolve) => {
    exec(
      command,
      { encoding: 'utf8', timeout: timeoutMs, maxBuffer: MAX_COMMAND_OUTPUT_BYTES, windowsHide: true },
      (error, stdout, stderr) => {
        const failure = error as
          (Error & { code?: unknown; killed?: boolean; signal?: string | null }) | null;
        const spawnFailure = typeof failure?.code === 'string' ? failure.code : undefined;
        // exec kills the child when the timeout passes; `killed` alone also covers an oversized output,
        // which comes with a string code instead.
        const timedOut = failure?.killed === true && spawnFailure === undefined && timeoutMs > 0;
        const exitCode = typeof failure?.code === 'number' ? failure.code : failure === null ? 0 : null;
        resolve(
          outcome(
            stdout,
            stderr,
            {
              code: exitCode,
              signal: failure?.signal ?? null,
              timedOut,
              failure: spawnFailure,
            },
            timeoutMs,
          ),
        );
      },
    );
  });
}
