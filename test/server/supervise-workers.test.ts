/**
 * `superviseWorkers`, the primary of `tpx serve --workers`, run in the test process over real
 * `node:cluster` workers (a small stand-in worker script, `test/e2e/fixtures/cluster-worker.mjs`): it starts the
 * workers, says once on which port they all listen, starts a new worker when one dies (after a backoff
 * when it died young), answers a worker's metrics request with every worker's metrics summed (or with why
 * they could not be), serves the sum on its own metrics port, stops with a worker's exit code when one
 * fails before listening, and on SIGTERM or SIGINT drains every worker and resolves 0.
 *
 * The signal is delivered to the listeners `superviseWorkers` added, not sent to the process, so that the
 * test runner's own signal handling is left alone. What happens in which order is told apart by the order
 * of events and timers, never by how long something took.
 */
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { AggregatorRegistry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { superviseWorkers } from '../../src/server/workers.js';

const WORKER_SCRIPT = fileURLToPath(new URL('../e2e/fixtures/cluster-worker.mjs', import.meta.url));
const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

// prom-client adds a `message` listener to `cluster`, once per process, at the first AggregatorRegistry:
// made here, so that the listeners a test sees before `superviseWorkers` runs already include it.
new AggregatorRegistry();

type Mode = 'serve' | 'failing-metrics' | 'fail' | 'exit-0' | 'killed';

function useWorkerScript(mode: Mode): void {
  cluster.setupPrimary({ exec: WORKER_SCRIPT, args: [mode], silent: true });
}

/** Calls the listeners for `signal` that were added after `before` was taken. */
function deliver(signal: 'SIGTERM' | 'SIGINT', before: readonly unknown[]): void {
  for (const listener of process.listeners(signal)) {
    if (!before.includes(listener)) (listener as (signal: string) => void)(signal);
  }
}

/** GETs `url` on a connection of its own, giving up after 15 s. */
function get(url: string): Promise<Response> {
  return fetch(url, { headers: { connection: 'close' }, signal: AbortSignal.timeout(15_000) });
}

async function text(url: string): Promise<string> {
  return (await get(url)).text();
}

/** Resolves after `check` holds, polling every 20 ms for at most 15 s. */
async function until(check: () => boolean): Promise<void> {
  for (let waited = 0; !check(); waited += 20) {
    if (waited > 15_000) throw new Error(`gave up waiting for ${check.toString()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** What `node:cluster` reported since `watchCluster` was called, in order. */
interface ClusterEvents {
  forked: Worker[];
  /** When each worker was forked, by this process's clock (no later than `superviseWorkers` saw it). */
  forkedAt: Map<Worker, number>;
  listened: Array<{ worker: Worker; port: number }>;
  disconnected: Worker[];
  exited: Array<[code: number | null, signal: string | null]>;
}

const unwatch: Array<() => void> = [];

/**
 * Records the cluster's events and calls `on.fork`/`on.exit` at each. Called before `superviseWorkers`,
 * these listeners run before its own for the same event; called after, after them.
 */
function watchCluster(
  on: { fork?: (events: ClusterEvents) => void; exit?: (events: ClusterEvents) => void } = {},
): ClusterEvents {
  const events: ClusterEvents = {
    forked: [],
    forkedAt: new Map(),
    listened: [],
    disconnected: [],
    exited: [],
  };
  const onFork = (worker: Worker) => {
    events.forked.push(worker);
    events.forkedAt.set(worker, Date.now());
    on.fork?.(events);
  };
  const onListening = (worker: Worker, address: { port: number }) =>
    events.listened.push({ worker, port: address.port });
  const onDisconnect = (worker: Worker) => events.disconnected.push(worker);
  const onExit = (_worker: Worker, code: number | null, signal: string | null) => {
    events.exited.push([code, signal]);
    on.exit?.(events);
  };
  cluster.on('fork', onFork);
  cluster.on('listening', onListening);
  cluster.on('disconnect', onDisconnect);
  cluster.on('exit', onExit);
  unwatch.push(() => {
    cluster.off('fork', onFork);
    cluster.off('listening', onListening);
    cluster.off('disconnect', onDisconnect);
    cluster.off('exit', onExit);
  });
  return events;
}

/** The listeners `superviseWorkers` may add, to check it takes them all away again. */
function listenersNow() {
  return {
    sigterm: process.listeners('SIGTERM'),
    sigint: process.listeners('SIGINT'),
    listening: cluster.listeners('listening'),
    message: cluster.listeners('message'),
    exit: cluster.listeners('exit'),
  };
}

afterEach(() => {
  for (const stop of unwatch.splice(0)) stop();
  for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
});

describe('superviseWorkers', () => {
  it('runs the workers on one port, announced once all listen, replaces one that dies, sums their metrics, and drains them all on SIGTERM', async () => {
    useWorkerScript('serve');
    const events = watchCluster();
    const reports: string[] = [];
    const announced: Array<{ port: number; listened: number }> = [];
    const before = listenersNow();
    const supervised = superviseWorkers({
      count: 2,
      stopTimeoutMs: 15_000,
      metricsListen: { host: '127.0.0.1', port: 0 },
      report: (line) => reports.push(line),
      onListening: (port) => announced.push({ port, listened: events.listened.length }),
    });
    await until(() => events.listened.length === 2);
    const port = events.listened[0]!.port;
    expect(events.listened[1]!.port).toBe(port);
    // Announced once, when the second worker listened, not before.
    expect(announced).toStrictEqual([{ port, listened: 2 }]);
    const url = `http://127.0.0.1:${port}`;
    expect(Object.keys(cluster.workers ?? {})).toHaveLength(2);
    expect(process.listeners('SIGTERM').length - before.sigterm.length).toBe(1);
    expect(process.listeners('SIGINT').length - before.sigint.length).toBe(1);

    // A worker's metrics request is answered with both workers' counters summed, and the primary
    // serves the same sum on its own metrics port.
    await until(() => reports.some((line) => line.includes('aggregated metrics on ')));
    const metricsUrl = /aggregated metrics on (http:\/\/127\.0\.0\.1:\d+)\/metrics\n$/.exec(
      reports.at(-1)!,
    )?.[1];
    await text(`${url}/pid`);
    await text(`${url}/pid`);
    expect(await text(`${url}/metrics`)).toMatch(/^fixture_requests_total 3$/m);
    const scrape = await get(`${String(metricsUrl)}/metrics`);
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get('content-type')).toBe(PROMETHEUS_CONTENT_TYPE);
    expect(await scrape.text()).toMatch(/^fixture_requests_total 3$/m);

    expect(await text(`${url}/exit`)).toBe('exiting\n');
    await until(() => events.listened.length === 3);
    expect(events.forked).toHaveLength(3);
    expect(events.listened[2]!.port).toBe(port);
    expect(reports.some((line) => /^tpx serve: worker \d+ died \(1\); starting another\n$/.test(line))).toBe(
      true,
    );
    // Once every worker listened, a replacement that listens is not announced again.
    expect(announced).toHaveLength(1);

    deliver('SIGTERM', before.sigterm);
    await expect(supervised).resolves.toBe(0);
    expect(Object.keys(cluster.workers ?? {})).toHaveLength(0);
    // The worker that died, then the two that drained (none had to be killed).
    expect(events.exited).toStrictEqual([
      [1, null],
      [0, null],
      [0, null],
    ]);
    expect(reports.at(-1)).toBe('tpx serve: draining every worker\n');
    expect(reports.filter((line) => line.includes('failed to start'))).toStrictEqual([]);
    expect(listenersNow()).toStrictEqual(before);
  });

  it('stops with the exit code of a worker that fails before it listens, without restarting it', async () => {
    useWorkerScript('fail');
    const events = watchCluster();
    const reports: string[] = [];
    const listened: number[] = [];
    const before = listenersNow();
    const exitCode = await superviseWorkers({
      count: 1,
      stopTimeoutMs: 5_000,
      report: (line) => reports.push(line),
      onListening: (port) => listened.push(port),
    });
    expect(exitCode).toBe(3);
    expect(reports).toStrictEqual(['tpx serve: a worker failed to start (exit 3); stopping\n']);
    expect(listened).toStrictEqual([]);
    expect(events.forked).toHaveLength(1);
    expect(Object.keys(cluster.workers ?? {})).toHaveLength(0);
    expect(listenersNow()).toStrictEqual(before);
  });

  it.each([
    { mode: 'exit-0' as const, shown: '0' },
    { mode: 'killed' as const, shown: 'SIGKILL' },
  ])(
    'stops with exit code 2 when a worker fails before it listens with no failing exit code ($mode)',
    async ({ mode, shown }) => {
      useWorkerScript(mode);
      const events = watchCluster();
      const reports: string[] = [];
      const exitCode = await superviseWorkers({
        count: 1,
        stopTimeoutMs: 5_000,
        report: (line) => reports.push(line),
      });
      expect(exitCode).toBe(2);
      expect(reports).toStrictEqual([`tpx serve: a worker failed to start (exit ${shown}); stopping\n`]);
      expect(events.forked).toHaveLength(1);
    },
  );

  it('drains on SIGINT too', async () => {
    useWorkerScript('serve');
    const reports: string[] = [];
    const before = listenersNow();
    let port: number | undefined;
    const supervised = superviseWorkers({
      count: 1,
      stopTimeoutMs: 10_000,
      report: (line) => reports.push(line),
      onListening: (listening) => (port = listening),
    });
    await until(() => port !== undefined);
    deliver('SIGINT', before.sigint);
    await expect(supervised).resolves.toBe(0);
    expect(reports).toStrictEqual(['tpx serve: draining every worker\n']);
    expect(listenersNow()).toStrictEqual(before);
  });

  it('tells every worker to drain, each exiting 0 before the stop time runs out, with no onListening callback', async () => {
    useWorkerScript('serve');
    const reports: string[] = [];
    const before = listenersNow();
    const supervised = superviseWorkers({
      count: 2,
      stopTimeoutMs: 15_000,
      report: (line) => reports.push(line),
    });
    // Watched from after the supervisor's listeners: had its own thrown at the second worker's
    // `listening` (the one that is announced), this one would not see it.
    const events = watchCluster();
    await until(() => events.listened.length === 2);
    deliver('SIGTERM', before.sigterm);
    await expect(supervised).resolves.toBe(0);
    expect(events.exited).toStrictEqual([
      [0, null],
      [0, null],
    ]);
    expect(reports).toStrictEqual(['tpx serve: draining every worker\n']);
  });

  it('answers a worker’s metrics request, and a scrape of its metrics port, with why a worker’s metrics could not be collected', async () => {
    useWorkerScript('failing-metrics');
    const events = watchCluster();
    const reports: string[] = [];
    const before = listenersNow();
    const supervised = superviseWorkers({
      count: 1,
      stopTimeoutMs: 15_000,
      metricsListen: { host: '127.0.0.1', port: 0 },
      report: (line) => reports.push(line),
    });
    await until(() => events.listened.length === 1);
    await until(() => reports.some((line) => line.includes('aggregated metrics on ')));
    const metricsUrl = /aggregated metrics on (http:\/\/127\.0\.0\.1:\d+)\/metrics\n$/.exec(
      reports.at(-1)!,
    )?.[1];

    const url = `http://127.0.0.1:${events.listened[0]!.port}`;
    expect(await text(`${url}/metrics`)).toBe('error: the fixture gauge cannot be read');
    const scrape = await get(`${String(metricsUrl)}/metrics`);
    expect(scrape.status).toBe(503);
    expect(await scrape.text()).toBe(
      'metrics are not available right now: the fixture gauge cannot be read\n',
    );

    deliver('SIGTERM', before.sigterm);
    await expect(supervised).resolves.toBe(0);
  });

  it('replaces a worker that dies soon after it started only once the restart backoff has passed', async () => {
    useWorkerScript('serve');
    let forkedWhenChecked: number | undefined;
    const events = watchCluster({
      // Runs in the same turn as the supervisor's own handler: a check due in 200 ms comes before a
      // restart 30 s away, and after a restart done at once.
      exit: (seen) => {
        if (seen.exited.length === 1) setTimeout(() => (forkedWhenChecked = events.forked.length), 200);
      },
    });
    const reports: string[] = [];
    const before = listenersNow();
    const supervised = superviseWorkers({
      count: 1,
      stopTimeoutMs: 15_000,
      restartBackoffMs: 30_000,
      report: (line) => reports.push(line),
    });
    await until(() => events.listened.length === 1);
    expect(await text(`http://127.0.0.1:${events.listened[0]!.port}/exit`)).toBe('exiting\n');
    await until(() => forkedWhenChecked !== undefined);
    expect(forkedWhenChecked).toBe(1);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatch(/^tpx serve: worker \d+ died \(1\); starting another\n$/);

    deliver('SIGTERM', before.sigterm);
    await expect(supervised).resolves.toBe(0);
    expect(events.forked).toHaveLength(1);
  });

  it('replaces at once a worker that dies after living longer than the restart backoff', async () => {
    useWorkerScript('serve');
    let forkedWhenChecked: number | undefined;
    const events = watchCluster({
      // A check due in 200 ms comes after a restart done at once, and before one 400 ms away.
      exit: (seen) => {
        if (seen.exited.length === 1) setTimeout(() => (forkedWhenChecked = events.forked.length), 200);
      },
    });
    const before = listenersNow();
    const supervised = superviseWorkers({
      count: 1,
      stopTimeoutMs: 15_000,
      restartBackoffMs: 400,
      report: () => {},
    });
    await until(() => events.listened.length === 1);
    const first = events.forked[0]!;
    await until(() => Date.now() - events.forkedAt.get(first)! > 600);
    expect(await text(`http://127.0.0.1:${events.listened[0]!.port}/exit`)).toBe('exiting\n');
    await until(() => forkedWhenChecked !== undefined);
    expect(forkedWhenChecked).toBe(2);

    await until(() => events.listened.length === 2);
    deliver('SIGTERM', before.sigterm);
    await expect(supervised).resolves.toBe(0);
    expect(events.exited).toStrictEqual([
      [1, null],
      [0, null],
    ]);
  });

  it('does not start the replacement of a dead worker once the drain has begun', async () => {
    useWorkerScript('serve');
    const before = listenersNow();
    let forkedWhenChecked: number | undefined;
    const events = watchCluster({
      exit: (seen) => {
        if (seen.exited.length !== 1) return;
        // SIGTERM right after the death, before the supervisor's restart is due; the check is due
        // after that restart would have been.
        deliver('SIGTERM', before.sigterm);
        setTimeout(() => (forkedWhenChecked = events.forked.length), 1_000);
      },
    });
    const reports: string[] = [];
    const supervised = superviseWorkers({
      count: 1,
      stopTimeoutMs: 15_000,
      restartBackoffMs: 300,
      report: (line) => reports.push(line),
    });
    await until(() => events.listened.length === 1);
    expect(await text(`http://127.0.0.1:${events.listened[0]!.port}/exit`)).toBe('exiting\n');
    await expect(supervised).resolves.toBe(0);
    await until(() => forkedWhenChecked !== undefined);
    expect(forkedWhenChecked).toBe(1);
    expect(Object.keys(cluster.workers ?? {})).toHaveLength(0);
    expect(reports).toContain('tpx serve: draining every worker\n');
  });

  it('tells a worker that was still starting when the drain began to drain once it listens', async () => {
    useWorkerScript('serve');
    const before = listenersNow();
    const events = watchCluster({
      // SIGTERM as soon as the replacement is forked, long before it can listen.
      fork: (seen) => {
        if (seen.forked.length === 2) deliver('SIGTERM', before.sigterm);
      },
    });
    const supervised = superviseWorkers({
      count: 1,
      stopTimeoutMs: 15_000,
      restartBackoffMs: 0,
      report: () => {},
    });
    await until(() => events.listened.length === 1);
    expect(await text(`http://127.0.0.1:${events.listened[0]!.port}/exit`)).toBe('exiting\n');
    await expect(supervised).resolves.toBe(0);
    expect(events.listened).toHaveLength(2);
    // The replacement drained and exited 0; it was not killed when the stop time ran out.
    expect(events.exited).toStrictEqual([
      [1, null],
      [0, null],
    ]);
  });

  it('sends nothing to a worker whose channel is closed already, and kills it when the stop time runs out', async () => {
    useWorkerScript('serve');
    const events = watchCluster();
    const before = listenersNow();
    const supervised = superviseWorkers({ count: 1, stopTimeoutMs: 500, report: () => {} });
    await until(() => events.listened.length === 1);
    expect(await text(`http://127.0.0.1:${events.listened[0]!.port}/disconnect`)).toBe('disconnecting\n');
    await until(() => events.disconnected.length === 1);
    // Sending on a closed channel is an `error` event on the worker.
    const errors: unknown[] = [];
    events.forked[0]!.on('error', (error) => errors.push(error));
    deliver('SIGTERM', before.sigterm);
    await expect(supervised).resolves.toBe(0);
    expect(errors).toStrictEqual([]);
    expect(events.exited).toStrictEqual([[null, 'SIGKILL']]);
  });

  it('finishes the drain when a worker exits while its channel is still open, and closes that channel', async () => {
    useWorkerScript('serve');
    // Read at the worker's `exit` event, before the supervisor's own listener runs.
    const connectedAtExit: boolean[] = [];
    const events = watchCluster({ exit: (seen) => connectedAtExit.push(seen.forked[0]!.isConnected()) });
    const before = listenersNow();
    const supervised = superviseWorkers({ count: 1, stopTimeoutMs: 60_000, report: () => {} });
    await until(() => events.listened.length === 1);
    const holder = Number(await text(`http://127.0.0.1:${events.listened[0]!.port}/share-channel`));
    try {
      deliver('SIGTERM', before.sigterm);
      await expect(supervised).resolves.toBe(0);
      // The worker drained and exited with its channel still open, held by the other process.
      expect(events.exited).toStrictEqual([[0, null]]);
      expect(connectedAtExit).toStrictEqual([true]);
      // The primary closed it: an open channel would keep the primary's process from exiting.
      await until(() => events.disconnected.length === 1);
      expect(process.kill(holder, 0)).toBe(true);
    } finally {
      process.kill(holder, 'SIGKILL');
    }
  });
});
