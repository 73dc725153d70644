import { describe, expect, it } from 'vitest';
import { runShellCommand, runShellCommandSync } from './run-shell-command.js';

describe('runShellCommand and runShellCommandSync', () => {
  const both = [
    ['async', runShellCommand],
    [
      'sync',
      (command: string, timeoutMs: number) => Promise.resolve(runShellCommandSync(command, timeoutMs)),
    ],
  ] as const;

  for (const [name, run] of both) {
    it(`${name}: gives the trimmed output of a command that succeeds`, async () => {
      await expect(run('printf "  tok-shell\\n\\n"', 5_000)).resolves.toStrictEqual({
        ok: true,
        output: 'tok-shell',
      });
    });

    it(`${name}: names the exit code and the first line of stderr, shortened to 200 characters`, async () => {
      await expect(run('echo "first line" >&2; echo second >&2; exit 3', 5_000)).resolves.toStrictEqual({
        ok: false,
        reason: 'exited with code 3: "first line"',
      });
      const long = 'e'.repeat(250);
      await expect(run(`echo ${long} >&2; exit 1`, 5_000)).resolves.toStrictEqual({
        ok: false,
        reason: `exited with code 1: "${'e'.repeat(200)}…"`,
      });
      await expect(run('exit 2', 5_000)).resolves.toStrictEqual({ ok: false, reason: 'exited with code 2' });
    });

    it(`${name}: quotes a first stderr line of exactly 200 characters whole, and takes it from CRLF lines`, async () => {
      const line = 'f'.repeat(200);
      await expect(run(`printf '${line}\\r\\nnext\\r\\n' >&2; exit 4`, 5_000)).resolves.toStrictEqual({
        ok: false,
        reason: `exited with code 4: "${line}"`,
      });
    });

    it(`${name}: skips blank lines that open stderr`, async () => {
      await expect(run("printf '\\n  \\nthe reason\\n' >&2; exit 5", 5_000)).resolves.toStrictEqual({
        ok: false,
        reason: 'exited with code 5: "the reason"',
      });
    });

    it(`${name}: refuses an output larger than a token could be, saying the command could not be run`, async () => {
      await expect(run("head -c 2000000 /dev/zero | tr '\\0' a", 5_000)).resolves.toStrictEqual({
        ok: false,
        reason: `could not be run (${name === 'sync' ? 'ENOBUFS' : 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER'})`,
      });
    });

    it(`${name}: refuses a command that prints nothing`, async () => {
      await expect(run('echo "   "; echo why >&2', 5_000)).resolves.toStrictEqual({
        ok: false,
        reason: 'printed nothing on stdout: "why"',
      });
    });

    it(`${name}: names the signal that killed the command`, async () => {
      await expect(run('kill -TERM $$', 5_000)).resolves.toStrictEqual({
        ok: false,
        reason: 'was killed by SIGTERM',
      });
    });

    it(`${name}: gives up on a command that runs past its timeout`, async () => {
      await expect(run('sleep 5', 100)).resolves.toStrictEqual({
        ok: false,
        reason: 'did not finish within 100 ms',
      });
    });
  }
});
