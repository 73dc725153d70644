/**
 * Runs the built `tpx` binary as a process for end-to-end tests: to completion (`runTpx`), or as a
 * long-running `tpx serve` or `tpx mock-model` whose listening URL is read from its banner
 * (`startTpxServe`, `startTpxMockModel`).
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
export const STAND_IN = fileURLToPath(new URL('./fixtures/claude-stand-in.mjs', import.meta.url));
const BASE_ENV = { PATH: process.env['PATH'] ?? '', HOME: tmpdir() };

export interface TpxResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `tpx args…` to its end (at most `timeoutMs`), with only `env` (plus PATH and HOME) set. */
export function runTpx(
  args: string[],
  env: Record<string, string> = {},
  options: { input?: string; timeoutMs?: number; onStart?: (child: ChildProcess) => void } = {},
): Promise<TpxResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...BASE_ENV, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.stdin.end(options.input ?? '');
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    options.onStart?.(child);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** A running `tpx serve`. */
export interface TpxServe {
  url: string;
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `tpx serve --port 0 args…` and resolves once its banner (probe included) is printed. */
export function startTpxServe(args: string[], env: Record<string, string>): Promise<TpxServe> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], {
      env: { ...BASE_ENV, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tpx serve did not start: ${stderr}`));
    }, 20_000);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      // The banner ends with the command to point Claude Code at it.
      if (match !== null && stderr.includes('claude\n')) {
        clearTimeout(timer);
        resolve({
          url: match[1]!,
          child,
          stdout: () => stdout,
          stderr: () => stderr,
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null) {
                done(child.exitCode);
                return;
              }
              child.once('close', (code) => done(code));
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`tpx serve exited with ${String(code)}: ${stderr}`));
    });
  });
}

/**
 * Starts `tpx mock-model --port 0 args…` and resolves with its base URL (including `/v1`) once it
 * listens.
 */
export function startTpxMockModel(args: string[] = []): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'mock-model', '--port', '0', ...args], {
      env: BASE_ENV,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tpx mock-model did not start: ${stdout}`));
    }, 20_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (match !== null) {
        clearTimeout(timer);
        resolve({ url: match[1]!, child });
      }
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`tpx mock-model exited with ${String(code)}: ${stdout}`));
    });
  });
}
