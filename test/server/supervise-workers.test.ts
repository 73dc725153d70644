/**
 * `superviseWorkers`, the primary of `tpx serve --workers`, run in the test process over real
 * `node:cluster` workers (a small stand-in worker script, `test/e2e/fixtures/cluster-worker.mjs`): it starts the
 * workers, says once on which port they all listen, starts a new worker when one dies, answers a
 * worker's metrics request with every worker's metrics summed, stops with a worker's exit code when one
 * fails before listening, and on SIGTERM or SIGINT drains every worker and resolves 0.
 *
 * The signal is delivered to the listeners `superviseWorkers` added, not sent to the process, so that the
 * test runner's own signal handling is left alone.
 */
import cluster from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { superviseWorkers } from '../../src/server/workers.js';

const WORKER_SCRIPT = fileURLToPath(new URL('../e2e/fixtures/cluster-worker.mjs', import.meta.url));

function useWorkerScript(mode: 'serve' | 'fail'): void {
  cluster.setupPrimary({ exec: WORKER_SCRIPT, args: [mode], silent: true });
}

/** Calls the listeners for `signal` that were added after `before` was taken. */
function deliver(signal: 'SIGTERM' | 'SIGINT', before: readonly unknown[]): void {
  for (const listener of process.listeners(signal)) {
    if (!before.includes(listener)) (listener as (signal: string) => void)(signal);
  }
}

async function text(url: string): Promise<string> {
  const response = await fetch(url, { headers: { connection: 'close' } });
  return response.text();
}

/** Resolves after `check` holds, polling every 20 ms for at most 15 s. */
async function until(check: () => boolean): Promise<void> {
  for (let waited = 0; !check(); waited += 20) {
    if (waited > 15_000) throw new Error(`gave up waiting for ${check.toString()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

afterEach(() => {
  for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
});

describe('superviseWorkers', () => {
  it('runs the workers on one port, replaces one that dies, sums their metrics, and drains them all on SIGTERM', async () => {
    useWorkerScript('serve');
    const reports: string[] = [];
    const ports: number[] = [];
    const before = { term: process.listeners('SIGTERM'), int: process.listeners('SIGINT') };
    const supervised = superviseWorkers({
      count: 2,
      stopTimeoutMs: 10_000,
      metricsListen: { host: '127.0.0.1', port: 0 },
      report: (line) => reports.push(line),
      onListening: (port) => ports.push(port),
    });
    await until(() => ports.length === 1);
    const url = `http://127.0.0.1:${ports[0]}`;
    expect(Object.keys(cluster.workers ?? {})).toHaveLength(2);
    expect(process.listeners('SIGTERM').length - before.term.length).toBe(1);
    expect(process.listeners('SIGINT').length - before.int.length).toBe(1);

    // A worker's metrics request is answered with both workers' counters summed.
    await until(() => reports.some((line) => line.includes('aggregated metrics on ')));
    await text(`${url}/pid`);
    await text(`${url}/pid`);
    const metrics = await text(`${url}/metrics`);
    expect(metrics).toMatch(/^fixture_requests_total 3$/m);

    const pids = () => Object.values(cluster.workers ?? {}).map((worker) => worker?.process.pid);
    const first = pids();
    expect(await text(`${url}/exit`)).toBe('exiting\n');
    await until(() => pids().length === 2 && pids().some((pid) => !first.includes(pid)));
    expect(reports.some((line) => /^tpx serve: worker \d+ died \(1\); starting another\n$/.test(line))).toBe(
      true,
    );
    // Once every worker listened, a replacement that listens is not announced again.
    await until(() => Object.values(cluster.workers ?? {}).every((worker) => worker?.isConnected()));
    expect(ports).toHaveLength(1);

    deliver('SIGTERM', before.term);
    await expect(supervised).resolves.toBe(0);
    expect(Object.keys(cluster.workers ?? {})).toHaveLength(0);
    expect(reports.at(-1)).toBe('tpx serve: draining every worker\n');
    expect(reports.filter((line) => line.includes('failed to start'))).toStrictEqual([]);
    expect(process.listeners('SIGTERM')).toStrictEqual(before.term);
    expect(process.listeners('SIGINT')).toStrictEqual(before.int);
  });

  it('stops with the exit code of a worker that fails before it listens, without restarting it', async () => {
    useWorkerScript('fail');
    const reports: string[] = [];
    const listened: number[] = [];
    const exitCode = await superviseWorkers({
      count: 1,
      stopTimeoutMs: 5_000,
      report: (line) => reports.push(line),
      onListening: (port) => listened.push(port),
    });
    expect(exitCode).toBe(3);
    expect(reports).toStrictEqual(['tpx serve: a worker failed to start (exit 3); stopping\n']);
    expect(listened).toStrictEqual([]);
    expect(Object.keys(cluster.workers ?? {})).toHaveLength(0);
  });

  it('drains on SIGINT too', async () => {
    useWorkerScript('serve');
    const reports: string[] = [];
    const before = process.listeners('SIGINT');
    let port: number | undefined;
    const supervised = superviseWorkers({
      count: 1,
      stopTimeoutMs: 10_000,
      report: (line) => reports.push(line),
      onListening: (listening) => (port = listening),
    });
    await until(() => port !== undefined);
    deliver('SIGINT', before);
    await expect(supervised).resolves.toBe(0);
    expect(reports).toStrictEqual(['tpx serve: draining every worker\n']);
  });
});
