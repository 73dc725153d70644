/**
 * Child processes for the benchmarks: `tpx serve`, `tpx mock-model` and the bench's own servers, each
 * run with plain `node` from a throw-away build of the sources (`build.ts`), each on a free loopback
 * port that it announces with a `… listening on http://…` line. Every child started here is remembered and ended by its own pid
 * when the run ends, even on failure.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { buildForChildren } from './build.js';
import { REPO_ROOT } from './paths.js';

export { REPO_ROOT };

/**
 * How long the suites that start many `tpx serve` processes at once wait for each to listen: on a
 * shared 2-core machine under heavy load, a start can take far longer than the default 30 s.
 */
export const START_TIMEOUT_MS = 120_000;

/** A running child server. */
export interface ChildServer {
  /** The URL it announced, e.g. `http://127.0.0.1:41234` (for the mock model: including `/v1`). */
  url: string;
  /** `http://127.0.0.1:41234`: the announced URL without its path. */
  origin: string;
  pid: number;
  /** Resident set size of the child now, in bytes (Linux `/proc`; `NaN` elsewhere). */
  rssBytes(): number;
  /** CPU time the child has used so far, user and system, all threads, in ms (Linux `/proc`; `NaN` elsewhere). */
  cpuMs(): number;
  /** Ends the child (SIGTERM, then SIGKILL after 5 s) and resolves once it has exited. */
  stop(): Promise<void>;
}

export interface SpawnOptions {
  /** Script path relative to the repository root, e.g. `src/cli.ts`; it runs from the build (`build.ts`). */
  script: string;
  args?: string[];
  /** The child's whole environment. */
  env: Record<string, string | undefined>;
  /** Extra flags for node itself, e.g. `--cpu-prof`. */
  nodeFlags?: string[];
  /** Give up waiting for the listening line after this long. @default 30_000 */
  startTimeoutMs?: number;
  /**
   * Send the child's stdout straight to `/dev/null` (the proxy's log lines: each costs the proxy a
   * write, as a terminal or a log file would, and costs the load generator nothing). The listening line
   * must then come on stderr. @default false
   */
  discardStdout?: boolean;
}

const running = new Set<ChildProcess>();
let isCleanupInstalled = false;

function installCleanup(): void {
  if (isCleanupInstalled) return;
  isCleanupInstalled = true;
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/** The environment of this process without any credential or setting the transport reads. */
export function cleanEnv(extra: Record<string, string>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith('ANTHROPIC_') || name.startsWith('TPX_') || name.startsWith('NODE_OPTIONS')) continue;
    env[name] = value;
  }
  return { ...env, ...extra };
}

/** The built JavaScript file for a source file of the repository, e.g. `src/cli.ts`. */
export function builtScript(script: string): string {
  // An absolute path is a JavaScript file built elsewhere (another commit's `dist/cli.js`), run as is.
  if (isAbsolute(script)) return script;
  return join(buildForChildren(), script.replace(/\.ts$/, '.js'));
}

/** Clock ticks per second of `/proc/<pid>/stat` times (`getconf CLK_TCK`; 100 on every Linux we run). */
const CLOCK_TICKS_PER_SECOND = 100;

/** Reads a process's CPU time (user + system, every thread) from `/proc/<pid>/stat`, in ms. */
export function cpuMsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the whole line, so 11 and 12 after the name and state.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

/** Reads a process's resident set size from `/proc/<pid>/status`, in bytes. */
export function rssOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
    return match === null ? Number.NaN : Number(match[1]) * 1024;
  } catch {
    return Number.NaN;
  }
}

/**
 * Starts a child and resolves once it printed its listening line (on stdout or stderr). Output after
 * that line is read and dropped, except the tail of stderr, kept for the error message should it fail.
 */
export async function spawnServer(options: SpawnOptions): Promise<ChildServer> {
  installCleanup();
  const stdout = options.discardStdout === true ? openSync('/dev/null', 'w') : 'pipe';
  const child = spawn(
    process.execPath,
    [...(options.nodeFlags ?? []), builtScript(options.script), ...(options.args ?? [])],
    {
      cwd: REPO_ROOT,
      env: options.env,
      stdio: ['ignore', stdout, 'pipe'],
    },
  );
  if (typeof stdout === 'number') closeSync(stdout); // the child holds its own copy
  running.add(child);
  const exited = once(child, 'exit').then(() => running.delete(child));
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(
            `${options.script} did not start within ${options.startTimeoutMs ?? 30_000} ms:\n${output}`,
          ),
        ),
      options.startTimeoutMs ?? 30_000,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match !== null) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${options.script} exited (${code ?? signal}) before listening:\n${output}`));
    });
  });
  // Keep draining both pipes so the child never blocks on a full pipe; stdout lines are discarded.
  child.stdout?.removeAllListeners('data');
  child.stdout?.resume();
  child.stderr?.removeAllListeners('data');
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  });
  const pid = child.pid!;
  let stopping: Promise<void> | undefined;
  return {
    url,
    origin: new URL(url).origin,
    pid,
    rssBytes: () => rssOf(pid),
    cpuMs: () => cpuMsOf(pid),
    stop() {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}
