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
import { LiveExchangeGatherer } from './live-view-cluster.js';

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

/** A promise and the function that resolves it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** The primary's workers over one run: its methods are the steps of {@link superviseWorkers}. */
class WorkerFleet {
  readonly aggregator = new AggregatorRegistry();
  /** Gathers every worker's exchanges for the live view (`live-view-cluster.ts`). */
  readonly liveExchanges = new LiveExchangeGatherer(() => this.alive.keys());
  /**
   * The workers forked and not yet exited, with when each was forked. Not `cluster.workers`: a worker
   * whose process exits before its channel closes stays listed there until the channel closes, after
   * its `exit` event, and the last one exiting that way would leave the drain waiting forever.
   */
  readonly alive = new Map<Worker, number>();
  readonly #listening = new WeakSet<Worker>();
  readonly #options: SuperviseOptions;
  readonly #restartBackoffMs: number;
  readonly stopRequested = deferred();
  readonly #allExited = deferred();
  #listeningCount = 0;
  #isAnnounced = false;
  isStopping = false;
  /** The exit code of a worker that failed before it listened. */
  failedStart: number | undefined;

  constructor(options: SuperviseOptions) {
    this.#options = options;
    this.#restartBackoffMs = options.restartBackoffMs ?? DEFAULT_RESTART_BACKOFF_MS;
  }

  fork(): void {
    this.alive.set(cluster.fork(), Date.now());
  }

  /** Asks a worker to drain, unless its channel is closed already (it is exiting: sending would fail). */
  #drain(worker: Worker): void {
    if (worker.isConnected()) worker.send({ type: DRAIN_MESSAGE });
  }

  readonly onListening = (worker: Worker, address: Address): void => {
    this.#listening.add(worker);
    this.#listeningCount += 1;
    // A worker that was still starting when the drain began was not listening for the drain message yet
    // (a worker waits for it once it listens), so it is told again: else it would serve until killed.
    if (this.isStopping) this.#drain(worker);
    if (!this.#isAnnounced && this.#listeningCount >= this.#options.count) {
      this.#isAnnounced = true;
      this.#options.onListening?.(address.port);
    }
  };

  /** A worker asks for every worker's metrics: prom-client's aggregation, answered over the channel. */
  readonly onMessage = (worker: Worker, message: unknown): void => {
    if (this.liveExchanges.onMessage(worker, message)) return;
    if (!isMessage(message, METRICS_REQUEST)) return;
    this.aggregator.clusterMetrics().then(
      (body) => worker.send({ type: METRICS_RESPONSE, id: message['id'], body }),
      (error: unknown) =>
        worker.send({
          type: METRICS_RESPONSE,
          id: message['id'],
          error: error instanceof Error ? error.message : String(error),
        }),
    );
  };

  readonly onExit = (worker: Worker, code: number | null, signal: string | null): void => {
    const forkedAt = this.alive.get(worker) ?? 0;
    this.alive.delete(worker);
    // Its channel can outlive it (held open by a process it started): closed here, or this process
    // would not exit after the drain while that other process lives.
    if (worker.isConnected()) worker.process.disconnect();
    if (!this.isStopping) {
      if (this.#listening.has(worker)) this.#replace(worker, code, signal, forkedAt);
      else this.#stopAfterFailedStart(code, signal);
    }
    if (this.isStopping && this.alive.size === 0) this.#allExited.resolve();
  };

  /**
   * A worker that never listened: the configuration or the address is wrong, and every worker would
   * fail the same way. Stop instead of restarting in a loop.
   */
  #stopAfterFailedStart(code: number | null, signal: string | null): void {
    this.failedStart = code === 0 || code === null ? 2 : code;
    this.#options.report(`tpx serve: a worker failed to start (exit ${String(code ?? signal)}); stopping\n`);
    this.stopRequested.resolve();
  }

  /** A worker that served and died is replaced, after a pause when it died young. */
  #replace(worker: Worker, code: number | null, signal: string | null, forkedAt: number): void {
    this.#options.report(
      `tpx serve: worker ${worker.process.pid} died (${String(signal ?? code)}); starting another\n`,
    );
    const lived = Date.now() - forkedAt;
    setTimeout(
      () => {
        if (!this.isStopping) this.fork();
      },
      lived < this.#restartBackoffMs ? this.#restartBackoffMs : 0,
    ).unref();
  }

  /** Drains every worker and waits for all of them to exit, killing them after `stopTimeoutMs`. */
  async stop(): Promise<void> {
    if (this.isStopping) return;
    this.isStopping = true;
    for (const worker of this.alive.keys()) this.#drain(worker);
    const killTimer = setTimeout(() => {
      for (const worker of this.alive.keys()) worker.process.kill('SIGKILL');
    }, this.#options.stopTimeoutMs);
    killTimer.unref();
    if (this.alive.size > 0) await this.#allExited.promise;
    clearTimeout(killTimer);
  }
}

/** Resolves when SIGINT or SIGTERM comes, or the fleet asks to stop; stops listening for them then. */
async function untilStopped(fleet: WorkerFleet, report: (line: string) => void): Promise<void> {
  const onSignal = () => {
    report('tpx serve: draining every worker\n');
    fleet.stopRequested.resolve();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  await fleet.stopRequested.promise;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
}

/**
 * Runs the primary until SIGTERM/SIGINT and every worker has exited. Resolves to the exit code: 0 after
 * a drain, or the exit code of a worker that failed before it listened.
 */
export async function superviseWorkers(options: SuperviseOptions): Promise<number> {
  const fleet = new WorkerFleet(options);
  cluster.on('listening', fleet.onListening);
  cluster.on('message', fleet.onMessage);
  cluster.on('exit', fleet.onExit);
  let metricsServer: RunningMetricsServer | undefined;
  for (let index = 0; index < options.count; index++) fleet.fork();
  if (options.metricsListen !== undefined) {
    const { aggregator } = fleet;
    metricsServer = await startMetricsServer({
      ...options.metricsListen,
      source: { contentType: aggregator.contentType, render: () => aggregator.clusterMetrics() },
    });
    options.report(`tpx serve: aggregated metrics on ${metricsServer.url}/metrics\n`);
  }
  await untilStopped(fleet, options.report);
  await fleet.stop();
  await metricsServer?.close();
  // Nothing of this run may act on the workers of a later one in the same process.
  cluster.off('listening', fleet.onListening);
  cluster.off('message', fleet.onMessage);
  cluster.off('exit', fleet.onExit);
  return fleet.failedStart ?? 0;
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
