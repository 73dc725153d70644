/**
 * The flags of `tpx serve`'s operational side (workers, metrics, pings, draining) and their help text,
 * apart from `serve-operations.ts` so that the other commands start without loading what serving
 * needs (prom-client, the cluster supervisor). See `serve-operations.ts` for what each one does.
 *
 * @module
 */

/** The `parseArgs` options `readOperations` reads. */
export const OPERATIONS_OPTIONS = {
  workers: { type: 'string' },
  'metrics-port': { type: 'string' },
  'no-metrics': { type: 'boolean' },
  'ping-interval': { type: 'string' },
  'drain-delay': { type: 'string' },
  'shutdown-grace': { type: 'string' },
} as const;

/** The help lines of those options. */
export const OPERATIONS_HELP = `  --workers <n|auto>    worker processes sharing the port (default 1; auto: one per usable core) [TPX_WORKERS]
  --metrics-port <n>    serve GET /metrics on this port, without the proxy token [TPX_METRICS_PORT]
                        (default: on the main port, behind the proxy token when one is set)
  --no-metrics          no Prometheus metrics [TPX_METRICS=off]
  --ping-interval <ms>  ping streams whose upstream is silent this long (default 15000; 0: never) [TPX_PING_INTERVAL_MS]
  --drain-delay <ms>    on SIGTERM, keep accepting this long after /readyz turns 503 (default 0) [TPX_DRAIN_DELAY_MS]
  --shutdown-grace <ms> on SIGTERM, let in-flight exchanges run this long (default 10000) [TPX_SHUTDOWN_GRACE_MS]
OpenTelemetry: traces and GenAI metrics over OTLP/HTTP when the standard OTEL_* variables configure an
exporter (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_TRACES_EXPORTER=otlp, …); off otherwise.
`;
