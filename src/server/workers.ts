/**
 * `tpx serve --workers N`: several proxy processes sharing one port through `node:cluster`, each with
 * its own transport and connection pool. The proxy keeps no state between exchanges (the tool-id codec
 * is a pure function), so any worker can serve any turn of any conversation.
 *
 * The primary process serves nothing itself. It
 * - starts the workers, and starts a new one when a worker dies (not when one fails to start: then the
 *   configuration is wrong, and the primary stops with that worker's exit code);
 * - aggregates the workers' metrics (prom-client's `AggregatorRegistry`): a worker asked for `/metrics`
 *   fetches the sum over all workers from the primary, and `--metrics-port` is served by the primary;
 * - on SIGTERM or SIGINT tells every worker to drain (`/readyz` answers 503, in-flight exchanges finish),
 *   waits for all of them to exit, then exits. A worker still starting then is told once it listens.
 *
 * @module
 */
import cluster, { type Address, type Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { TransportError } from '../errors.js';
import { startMetricsServer, type RunningMetricsServer } from './metrics-server.js';
import { DRAIN_MESSAGE } from './worker-process.js';
import type { MetricsSource } from './operational-routes.js';
import { usableCores } from './usable-cores.js';

const METRICS_REQUEST = 'tpx:metrics-request';
const METRICS_RESPONSE = 'tpx:metrics-response';
/** How long a worker waits for the primary's aggregated metrics. */
const METRICS_TIMEOUT_MS = 5_000;
/** A worker that dies sooner than this after starting is not restarted more than once a second. */
const DEFAULT_RESTART_BACKOFF_MS = 1_000;

/**
 * The number of workers for a `--workers` value: a whole number ≥ 1, or `auto` for one per core this
 * process may use (within a container's CPU limit: `usable-cores.ts`).
 *
 * @throws TransportError `MODEL_ECONFIG` for anything else.
 */
export function parseWorkerCount(value: string, cores: () => number = usableCores): number {
  if (value === 'auto') return Math.max(1, cores());
  const count = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(count) || count < 1 || count > 1024) {
    throw new TransportError(
      'MODEL_ECONFIG',
      `--workers must be a whole number from 1 to 1024, or auto (one per core), got ${value}`,
    );
  }
  return count;
}

/** Options of {@link superviseWorkers}. */
export interface SuperviseOptions {
  /** How many workers to run. */
  count: number;
  /** Where the primary serves the aggregated `/metrics`, when set. */
  metricsListen?: { host: string; port: number } | undefined;
  /** How long to wait for the workers to drain after SIGTERM before killing them, in ms. */
  stopTimeoutMs: number;
  /** Progress lines for the operator (stderr). */
  report: (line: string) => void;
  /** Called once, when every worker first listens, with the port they share. */
  onListening?: (port: number) => void;
  /**
   * A worker that dies sooner than this after it started is replaced this long after its death (so a
   * worker that keeps crashing is not restarted in a tight loop); one that lived longer is replaced at
   * once. In ms. @default 1000
   */
  restartBackoffMs?: number | undefined;
}

function isMessage(value: unknown, type: string): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === type;
}

/**
 * Runs the primary until SIGTERM/SIGINT and every worker has exited. Resolves to the exit code: 0 after
 * a drain, or the exit code of a worker that failed before it listened.
 */
export async function superviseWorkers(options: SuperviseOptions): Promise<number> {
  const aggregator = new AggregatorRegistry();
  let metricsServer: RunningMetricsServer | undefined;
  let stopping = false;
  let failedStart: number | undefined;
  const listening = new WeakSet<Worker>();
  let requestStop: () => void = () => {};
  const stopRequested = new Promise<void>((resolve) => {
    requestStop = resolve;
  });
  const restartBackoffMs = options.restartBackoffMs ?? DEFAULT_RESTART_BACKOFF_MS;
  /**
   * The workers forked and not yet exited, with when each was forked. Not `cluster.workers`: a worker
   * whose process exits before its channel closes stays listed there until the channel closes, after
   * its `exit` event, and the last one exiting that way would leave the drain waiting forever.
   */
  const alive = new Map<Worker, number>();

  const fork = (): void => {
    alive.set(cluster.fork(), Date.now());
  };

  /** Asks a worker to drain, unless its channel is closed already (it is exiting: sending would fail). */
  const drain = (worker: Worker): void => {
    if (worker.isConnected()) worker.send({ type: DRAIN_MESSAGE });
  };

  let isAnnounced = false;
  let listeningCount = 0;
  const onWorkerListening = (worker: Worker, address: Address): void => {
    listening.add(worker);
    listeningCount += 1;
    // A worker that was still starting when the drain began was not listening for the drain message yet
    // (a worker waits for it once it listens), so it is told again: else it would serve until killed.
    if (stopping) drain(worker);
    if (!isAnnounced && listeningCount >= options.count) {
      isAnnounced = true;
      options.onListening?.(address.port);
    }
  };
  const onWorkerMessage = (worker: Worker, message: unknown): void => {
    if (!isMessage(message, METRICS_REQUEST)) return;
    aggregator.clusterMetrics().then(
      (body) => worker.send({ type: METRICS_RESPONSE, id: message['id'], body }),
      (error: unknown) =>
        worker.send({
          type: METRICS_RESPONSE,
          id: message['id'],
          error: error instanceof Error ? error.message : String(error),
        }),
    );
  };

  let onWorkerExit: (worker: Worker, code: number | null, signal: string | null) => void = () => {};
  const allExited = new Promise<void>((resolve) => {
    onWorkerExit = (worker, code, signal) => {
      const forkedAt = alive.get(worker) ?? 0;
      alive.delete(worker);
      // Its channel can outlive it (held open by a process it started): closed here, or this process
      // would not exit after the drain while that other process lives.
      if (worker.isConnected()) worker.process.disconnect();
      if (!stopping) {
        if (!listening.has(worker)) {
          // It never listened: the configuration or the address is wrong, and every worker would fail
          // the same way. Stop instead of restarting in a loop.
          failedStart = code === 0 || code === null ? 2 : code;
          options.report(`tpx serve: a worker failed to start (exit ${String(code ?? signal)}); stopping\n`);
          requestStop();
        } else {
          options.report(
            `tpx serve: worker ${worker.process.pid} died (${String(signal ?? code)}); starting another\n`,
          );
          const lived = Date.now() - forkedAt;
          setTimeout(
            () => {
              if (!stopping) fork();
            },
            lived < restartBackoffMs ? restartBackoffMs : 0,
          ).unref();
        }
      }
      if (stopping && alive.size === 0) resolve();
    };
  });
  cluster.on('listening', onWorkerListening);
  cluster.on('message', onWorkerMessage);
  cluster.on('exit', onWorkerExit);

  async function stop(): Promise<void> {
    if (stopping) return;
    stopping = true;
    for (const worker of alive.keys()) drain(worker);
    const killTimer = setTimeout(() => {
      for (const worker of alive.keys()) worker.process.kill('SIGKILL');
    }, options.stopTimeoutMs);
    killTimer.unref();
    if (alive.size > 0) await allExited;
    clearTimeout(killTimer);
  }

  for (let index = 0; index < options.count; index++) fork();
  if (options.metricsListen !== undefined) {
    metricsServer = await startMetricsServer({
      ...options.metricsListen,
      source: { contentType: aggregator.contentType, render: () => aggregator.clusterMetrics() },
    });
    options.report(`tpx serve: aggregated metrics on ${metricsServer.url}/metrics\n`);
  }

  const onSignal = () => {
    options.report('tpx serve: draining every worker\n');
    requestStop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  await stopRequested;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  await stop();
  await metricsServer?.close();
  // Nothing of this run may act on the workers of a later one in the same process.
  cluster.off('listening', onWorkerListening);
  cluster.off('message', onWorkerMessage);
  cluster.off('exit', onWorkerExit);
  return failedStart ?? 0;
}

/**
 * In a worker: makes `registry` the one the primary aggregates, and returns a metrics source that
 * answers with every worker's metrics summed (asked of the primary).
 */
export function workerMetricsSource(registry: Registry): MetricsSource {
  // Constructing one registers prom-client's answer to the primary's requests in this worker.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
  let nextId = 0;
  return {
    contentType: registry.contentType,
    render() {
      const id = nextId++;
      return new Promise<string>((resolve, reject) => {
        const onMessage = (message: unknown) => {
          if (!isMessage(message, METRICS_RESPONSE) || message['id'] !== id) return;
          done();
          if (typeof message['body'] === 'string') resolve(message['body']);
          else {
            const reason = message['error'];
            reject(new Error(typeof reason === 'string' ? reason : 'no metrics from the primary process'));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`the primary process did not answer within ${METRICS_TIMEOUT_MS} ms`));
        }, METRICS_TIMEOUT_MS);
        const done = () => {
          clearTimeout(timer);
          process.off('message', onMessage);
        };
        process.on('message', onMessage);
        process.send?.({ type: METRICS_REQUEST, id });
      });
    },
  };
}
