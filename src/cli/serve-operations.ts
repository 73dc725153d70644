/**
 * The operational side of `tpx serve`: workers, metrics, traces, pings and draining. The flags and
 * variables are read here, and the pieces from `server/` put together, so that `commands.ts` only
 * hands them over.
 *
 * | flag | variable | meaning |
 * |------|----------|---------|
 * | `--workers N\|auto` | `TPX_WORKERS` | worker processes sharing the port (default 1; `auto`: one per core this process may use, `usable-cores.ts`) |
 * | `--metrics-port N` | `TPX_METRICS_PORT` | serve `/metrics` on this port (no token) instead of the main one (token) |
 * | `--no-metrics` | `TPX_METRICS=off` | no Prometheus metrics at all |
 * | `--ping-interval MS` | `TPX_PING_INTERVAL_MS` | ping silent streams after this many ms (default 15000; 0: never) |
 * | `--drain-delay MS` | `TPX_DRAIN_DELAY_MS` | keep accepting this long after `/readyz` turned 503 (default 0) |
 * | `--shutdown-grace MS` | `TPX_SHUTDOWN_GRACE_MS` | how long in-flight exchanges may finish at shutdown (default 10000) |
 *
 * @module
 */
import { TransportError } from '../errors.js';
import { startMetricsServer, type RunningMetricsServer } from '../server/metrics-server.js';
import type { MetricsSource } from '../server/operational-routes.js';
import { combineTelemetry, type Telemetry } from '../telemetry/exchange-telemetry.js';
import { createProxyMetrics, type ProxyMetrics } from '../telemetry/metrics.js';
import { genAiProviderName, startTracing, type Tracing } from '../telemetry/tracing.js';
import { parseWorkerCount, superviseWorkers, workerMetricsSource } from '../server/workers.js';
import { loadTokenCounter } from '../providers/load-token-counter.js';
import { createTransport } from '../transport/create-transport.js';
import type { TokenRefresh, TransportObserver } from '../providers/observer.js';
import type { Selection, TransportOptions } from '../transport/types.js';
import { flagOrVariable, type CliIo } from './output.js';

/** What the operational flags and variables ask for. */
export interface Operations {
  workers: number;
  metrics: boolean;
  metricsPort?: number;
  pingIntervalMs?: number;
  drainDelayMs?: number;
  shutdownGraceMs?: number;
}

type Values = Record<string, string | boolean | undefined>;

function milliseconds(found: { value: string; name: string } | undefined): number | undefined {
  if (found === undefined) return undefined;
  const ms = Number(found.value);
  if (!/^\d+$/.test(found.value.trim()) || !Number.isSafeInteger(ms)) {
    throw new TransportError(
      'MODEL_ECONFIG',
      `${found.name} must be a whole number of milliseconds, got ${found.value}`,
    );
  }
  return ms;
}

/**
 * Reads the operational flags, falling back to their variables.
 *
 * @throws TransportError `MODEL_ECONFIG` for a value that cannot work.
 */
export function readOperations(values: Values, env: Record<string, string | undefined>): Operations {
  const workers = flagOrVariable(values, 'workers', env, 'TPX_WORKERS');
  const operations: Operations = {
    workers: workers === undefined ? 1 : parseWorkerCount(workers.value),
    metrics: values['no-metrics'] !== true && (env['TPX_METRICS'] ?? '').toLowerCase() !== 'off',
  };
  const metricsPort = flagOrVariable(values, 'metrics-port', env, 'TPX_METRICS_PORT');
  if (metricsPort !== undefined) {
    const port = Number(metricsPort.value);
    if (!/^\d+$/.test(metricsPort.value) || port > 65_535) {
      throw new TransportError(
        'MODEL_ECONFIG',
        `${metricsPort.name} must be a whole number from 0 to 65535, got ${metricsPort.value}`,
      );
    }
    operations.metricsPort = port;
  }
  const ping = milliseconds(flagOrVariable(values, 'ping-interval', env, 'TPX_PING_INTERVAL_MS'));
  if (ping !== undefined) operations.pingIntervalMs = ping;
  const drain = milliseconds(flagOrVariable(values, 'drain-delay', env, 'TPX_DRAIN_DELAY_MS'));
  if (drain !== undefined) operations.drainDelayMs = drain;
  const grace = milliseconds(flagOrVariable(values, 'shutdown-grace', env, 'TPX_SHUTDOWN_GRACE_MS'));
  if (grace !== undefined) operations.shutdownGraceMs = grace;
  return operations;
}

/**
 * A transport observer whose target is set later: the transport is created before the metrics (which
 * need its provider), and token refreshes from the start must still be counted.
 */
export function deferredTransportObserver(): TransportObserver & { target?: TransportObserver } {
  const deferred: TransportObserver & { target?: TransportObserver } = {
    onTokenRefresh(refresh: TokenRefresh) {
      deferred.target?.onTokenRefresh?.(refresh);
    },
  };
  return deferred;
}

/** Metrics and traces of one serving process, and how to stop them. */
export interface Observability {
  /**
   * For `startServer({ telemetry })`: the Prometheus metrics, and the spans and GenAI histograms when
   * `OTEL_*` installed the OpenTelemetry SDK; absent when neither is on.
   */
  telemetry?: Telemetry;
  /** For `startServer({ metrics })`: served on the main port. */
  metrics?: MetricsSource;
  /** The metrics listener of `--metrics-port`, when this process runs it. */
  metricsServer?: RunningMetricsServer;
  tracing?: Tracing;
  /** The process's metrics, when on. */
  proxyMetrics?: ProxyMetrics;
  close(): Promise<void>;
}

/**
 * Starts metrics and traces for one serving process (a single `tpx serve`, or one worker).
 *
 * @param isWorker in a worker, `/metrics` answers every worker's metrics summed (asked of the primary),
 * and `--metrics-port` is the primary's, not this process's.
 */
export async function startObservability(options: {
  operations: Operations;
  selection: Selection;
  env: Record<string, string | undefined>;
  host: string;
  isWorker: boolean;
  observer: ReturnType<typeof deferredTransportObserver>;
}): Promise<Observability> {
  const { operations, selection } = options;
  const result: Observability = { close: async () => {} };
  let metricsServer: RunningMetricsServer | undefined;
  if (operations.metrics) {
    const proxyMetrics = createProxyMetrics({ provider: selection.provider });
    options.observer.target = proxyMetrics.transportObserver;
    result.proxyMetrics = proxyMetrics;
    const source: MetricsSource = options.isWorker
      ? workerMetricsSource(proxyMetrics.registry)
      : { contentType: proxyMetrics.registry.contentType, render: () => proxyMetrics.registry.metrics() };
    if (operations.metricsPort === undefined) result.metrics = source;
    else if (!options.isWorker) {
      metricsServer = await startMetricsServer({ host: options.host, port: operations.metricsPort, source });
      result.metricsServer = metricsServer;
    }
  }
  // The OpenTelemetry SDK is installed (and loaded) only when OTEL_* configures an exporter.
  const tracing = await startTracing(options.env, {
    providerName: genAiProviderName(selection.provider, selection.dialect?.name),
  });
  if (tracing !== undefined) result.tracing = tracing;
  if (tracing?.spanExportLosses !== undefined)
    result.proxyMetrics?.countSpanExportLosses(tracing.spanExportLosses);
  const telemetry = combineTelemetry(result.proxyMetrics, tracing);
  if (telemetry !== undefined) result.telemetry = telemetry;
  result.close = async () => {
    await metricsServer?.close();
    await tracing?.shutdown();
  };
  return result;
}

/**
 * `tpx serve --workers N` in the primary process: checks the configuration once (a worker would fail
 * the same way), then runs the workers until SIGTERM/SIGINT (see `server/workers.ts`).
 */
export async function serveWithWorkers(
  operations: Operations,
  host: string,
  io: CliIo,
  transportOptions: TransportOptions = { env: io.env },
): Promise<number> {
  const transport = createTransport(transportOptions);
  const { selection } = transport;
  await transport.close();
  return superviseWorkers({
    count: operations.workers,
    metricsListen:
      operations.metrics && operations.metricsPort !== undefined
        ? { host, port: operations.metricsPort }
        : undefined,
    stopTimeoutMs: (operations.drainDelayMs ?? 0) + (operations.shutdownGraceMs ?? 10_000) + 5_000,
    report: (line) => io.stderr(line),
    onListening(port) {
      const shownHost = host.includes(':') ? `[${host}]` : host;
      io.stderr(
        `tpx serve listening on http://${shownHost}:${port} with ${operations.workers} workers\n` +
          `  provider: ${selection.provider} (${selection.reason})\n`,
      );
    },
  });
}

/**
 * Loads what the first exchange would otherwise load while a client waits: on the `tpx` path, the token
 * counter (its BPE ranks hold the event loop for a few hundred ms, more on a busy machine). Done before
 * listening, so that a replica a load balancer sees ready answers promptly from its first exchange.
 */
export async function warmUp(selection: Selection): Promise<void> {
  if (selection.provider === 'tpx') await loadTokenCounter();
}
