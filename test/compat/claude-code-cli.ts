/**
 * The real Claude Code CLI (`@anthropic-ai/claude-code`, a development dependency) as a process for the
 * compatibility test: print mode with `--output-format stream-json`, a fresh `HOME` and working folder
 * per run, and the switches that keep it off the network except for the loopback proxy it is pointed at.
 *
 * ```ts
 * const { binary } = await locateClaudeCode();
 * const workspace = createWorkspace();
 * const run = await runClaudeCode(binary, ['-p', 'List the files here', ...STREAM_JSON], workspace, {
 *   ANTHROPIC_BASE_URL: proxy.url,
 *   ANTHROPIC_AUTH_TOKEN: 'unused',
 * }, 60_000);
 * readSession(parseStreamJson(run.stdout)); // the tool round trip, the result event
 * ```
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI } from '../e2e/cli-process.js';

/** The `claude` executable `npm ci` installs: the package's install script puts the native binary there. */
export const CLAUDE_BIN = fileURLToPath(new URL('../../node_modules/.bin/claude', import.meta.url));

/**
 * The same native binary in the platform's own package (`@anthropic-ai/claude-code-linux-x64`, …), for an
 * npm that skipped the install script (npm's `allowScripts`) and left a stub at {@link CLAUDE_BIN}.
 */
const PLATFORM_BIN = fileURLToPath(
  new URL(
    `../../node_modules/@anthropic-ai/claude-code-${process.platform}-${process.arch}/claude`,
    import.meta.url,
  ),
);

/** The Claude Code binary that answers `--version`, and that version; throws saying how to install one. */
export async function locateClaudeCode(): Promise<{ binary: string; version: string }> {
  const answers: string[] = [];
  for (const binary of [CLAUDE_BIN, PLATFORM_BIN]) {
    const run = await runProcess(binary, ['--version'], { env: {}, cwd: tmpdir(), timeoutMs: 20_000 });
    const version = /^(\d+\.\d+\.\d+)/.exec(run.stdout.trim())?.[1];
    if (run.code === 0 && version !== undefined) return { binary, version };
    answers.push(`${binary}: ${(run.stderr.trim() || run.stdout.trim()).slice(0, 300)}`);
  }
  throw new Error(
    `Claude Code does not run (${answers.join('; ')}); run npm ci without --omit=optional so that ` +
      "@anthropic-ai/claude-code and its platform's package are installed",
  );
}

/** Print mode's machine-readable output: one JSON event per line (stream-json needs `--verbose` with `-p`). */
export const STREAM_JSON = ['--output-format', 'stream-json', '--verbose'] as const;

/**
 * What keeps Claude Code to the proxy it is given: no update checks, telemetry, error reports or other
 * non-essential requests. With these and a fresh `HOME` it opens no connection but the proxy's.
 */
export const QUIET_ENV: Readonly<Record<string, string>> = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
};

/** A finished process. */
export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  durationMs: number;
}

/** Processes still running, killed by {@link killLeftovers} (an `afterAll`) so none outlives the file. */
const liveProcesses = new Set<ChildProcess>();

/** Kills every process started here that has not exited yet. */
export function killLeftovers(): void {
  for (const child of liveProcesses) child.kill('SIGKILL');
  liveProcesses.clear();
}

/**
 * Runs `command args…` to its end, killed after `timeoutMs`, with only PATH and `env` in its
 * environment (nothing of the test process's own `ANTHROPIC_*` or `TPX_*` leaks in).
 */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { env: Record<string, string>; cwd: string; timeoutMs: number },
): Promise<ProcessResult> {
  const startedAt = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { PATH: process.env['PATH'] ?? '', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    liveProcesses.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    const finish = (code: number | null, signal: NodeJS.Signals | null, error = ''): void => {
      clearTimeout(timer);
      liveProcesses.delete(child);
      resolve({ code, signal, stdout, stderr: stderr + error, durationMs: Date.now() - startedAt });
    };
    child.once('error', (error) => finish(null, null, `\ncannot run ${command}: ${error.message}`));
    child.once('close', (code, signal) => finish(code, signal));
  });
}

/** A fresh `HOME` and a working folder with one file in it; `remove()` deletes both. */
export interface Workspace {
  home: string;
  cwd: string;
  remove(): void;
}

export function createWorkspace(): Workspace {
  const root = mkdtempSync(join(tmpdir(), 'tpx-compat-'));
  const home = join(root, 'home');
  const cwd = join(root, 'project');
  mkdirSync(home);
  mkdirSync(cwd);
  writeFileSync(join(cwd, 'notes.txt'), 'The build runs with npm test.\n');
  return { home, cwd, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** Runs `claude args…` itself (in front of `tpx serve`), in `workspace`, with `env` added. */
export function runClaudeCode(
  binary: string,
  args: readonly string[],
  workspace: Workspace,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<ProcessResult> {
  return runProcess(binary, args, {
    cwd: workspace.cwd,
    env: { ...QUIET_ENV, HOME: workspace.home, ...env },
    timeoutMs,
  });
}

/** Runs `tpx claude tpxArgs… --claude-bin <claude> -- claudeArgs…` (the built CLI) in `workspace`. */
export function runTpxClaude(
  binary: string,
  tpxArgs: readonly string[],
  claudeArgs: readonly string[],
  workspace: Workspace,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<ProcessResult> {
  return runProcess(
    process.execPath,
    [CLI, 'claude', ...tpxArgs, '--claude-bin', binary, '--', ...claudeArgs],
    { cwd: workspace.cwd, env: { ...QUIET_ENV, HOME: workspace.home, ...env }, timeoutMs },
  );
}

/** The JSON events of a stream-json output (lines that are not JSON objects are left out). */
export function parseStreamJson(stdout: string): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [];
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      events.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // A line cut by a killed process: the checks report what is missing.
    }
  }
  return events;
}
