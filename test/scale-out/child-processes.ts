/**
 * The processes the scale-out test starts (`tpx serve` replicas, HAProxy), each remembered from the
 * moment it is spawned, so that the test can stop every one of them whatever happened: a replica
 * that never became ready, a start that timed out in the middle of `Promise.all`, a restart that failed
 * after its predecessor was stopped.
 *
 * @module
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { waitFor } from '../helpers/wait-for.js';

/** A spawned process and the promise of its exit code (`null` after a signal, or when it never ran). */
export interface TrackedChild {
  child: ChildProcess;
  exited: Promise<number | null>;
}

/** Every process spawned through it, until it has exited. */
export class ChildProcesses {
  readonly #running = new Set<TrackedChild>();

  /** Spawns `command` and remembers it until it exits. */
  spawn(command: string, args: readonly string[], options: SpawnOptions): TrackedChild {
    const child = spawn(command, args, options);
    const exited = new Promise<number | null>((resolve) => {
      child.once('exit', (code) => resolve(code));
      // A process that could not be started at all emits `error` and never `exit`.
      child.once('error', () => {
        if (child.pid === undefined) resolve(null);
      });
    });
    const tracked: TrackedChild = { child, exited };
    this.#running.add(tracked);
    void exited.then(() => this.#running.delete(tracked));
    return tracked;
  }

  /** How many of the spawned processes have not exited yet. */
  get runningCount(): number {
    return this.#running.size;
  }

  /** Kills every process still running (SIGKILL) and resolves once all have exited. */
  async stopAll(): Promise<void> {
    const running = [...this.#running];
    for (const { child } of running) child.kill('SIGKILL');
    await Promise.all(running.map(({ exited }) => exited));
  }
}

/** A running `tpx serve` replica on a fixed port. */
export interface Replica extends TrackedChild {
  port: number;
}

/** What {@link startReplica} runs. */
export interface ReplicaOptions {
  /** The built CLI (`dist/cli.js`). */
  cli: string;
  port: number;
  /** Flags after `serve --port <port>`. */
  args: readonly string[];
  /** The replica's whole environment. */
  env: Record<string, string | undefined>;
  /** How long to wait for `/readyz` to answer 200. @default 15_000 */
  readyTimeoutMs?: number;
}

/**
 * Starts `tpx serve` on `options.port` through `children` and resolves once its `/readyz` answers 200.
 * A replica that does not get ready in time is killed before the error is thrown.
 */
export async function startReplica(children: ChildProcesses, options: ReplicaOptions): Promise<Replica> {
  const tracked = children.spawn(
    process.execPath,
    [options.cli, 'serve', '--port', String(options.port), ...options.args],
    { env: options.env, stdio: ['ignore', 'ignore', 'ignore'] },
  );
  try {
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${options.port}/readyz`)).status === 200,
      `replica on port ${options.port} ready`,
      options.readyTimeoutMs,
    );
  } catch (error) {
    tracked.child.kill('SIGKILL');
    await tracked.exited;
    throw error;
  }
  return { port: options.port, ...tracked };
}
