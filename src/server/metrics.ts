/**
 * The proxy's Prometheus metrics, with prom-client: what a team running agents through `tpx serve` wants
 * to graph and alert on. Every name starts with `tpx_`; the process metrics are prom-client's defaults.
 *
 * | metric | type | labels |
 * |--------|------|--------|
 * | `tpx_requests_total` | counter | `route`, `status`, `provider`, `model`, `upstream_model` |
 * | `tpx_exchange_duration_seconds` | histogram | `route`, `provider`, `stream` |
 * | `tpx_time_to_first_byte_seconds` | histogram | `route`, `provider`, `stream` |
 * | `tpx_tokens_total` | counter | `provider`, `model`, `type` (`input`, `output`, `cache_creation`, `cache_read`) |
 * | `tpx_upstream_attempts_total` | counter | `provider`, `status` (`error` when none came back) |
 * | `tpx_upstream_retries_total` | counter | `provider` |
 * | `tpx_errors_total` | counter | `provider`, `code` (`MODEL_*`) |
 * | `tpx_open_streams` | gauge | `provider` |
 * | `tpx_token_refreshes_total` | counter | `source`, `outcome` |
 *
 * Labels that come from clients (the model) are bounded: at most {@link MAX_LABEL_VALUES} distinct values
 * per label, each at most {@link MAX_LABEL_LENGTH} characters; the rest count as `other`, so a client
 * cannot grow the scrape without bound. Routes outside the proxy's own are counted as `other` too.
 *
 * @module
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ProviderName } from '../errors.js';
import type { ExchangeObserver, TransportObserver } from '../providers/observer.js';
import type { ExchangeTelemetry, Telemetry } from './telemetry.js';

/** Distinct values one client-controlled label may take before new ones count as `other`. */
export const MAX_LABEL_VALUES = 100;
/** Longest client-controlled label value kept; longer ones count as `other`. */
export const MAX_LABEL_LENGTH = 120;

/** The routes counted by name; any other path is `other`. */
const ROUTES: ReadonlySet<string> = new Set([
  '/v1/messages',
  '/v1/messages/count_tokens',
  '/v1/models',
  '/healthz',
  '/readyz',
  '/metrics',
]);

/**
 * How often the default metrics' event-loop monitor samples the loop's delay, in ms. prom-client's own
 * default, 10 ms, wakes an idle proxy a hundred times a second: that alone took its CPU at rest from
 * 1.5 to about 9 ms a second. At 100 ms it costs about 0.5 ms a second, and a scrape every 15 s still
 * summarises 150 samples (each measures the delay exactly; only the sampling is sparser).
 */
export const EVENT_LOOP_SAMPLE_INTERVAL_MS = 100;

const DURATION_BUCKETS_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
const FIRST_BYTE_BUCKETS_SECONDS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** Options of {@link createProxyMetrics}. */
export interface ProxyMetricsOptions {
  /** Also collect prom-client's default process metrics (CPU, memory, event loop lag, …). @default true */
  collectProcessMetrics?: boolean;
  /** The provider, for the token-refresh and stream labels. */
  provider: ProviderName;
}

/** The metrics of one proxy process. */
export interface ProxyMetrics extends Telemetry {
  /** The registry holding every metric (for `/metrics`, and for aggregation across workers). */
  readonly registry: Registry;
  /** Give this to `createTransport({ observer })`, so token refreshes are counted. */
  readonly transportObserver: TransportObserver;
}

/** Keeps a client-controlled label within bounds; see the module comment. */
function boundedLabel(): (value: string | undefined) => string {
  const seen = new Set<string>();
  return (value) => {
    if (value === undefined || value === '') return 'none';
    if (seen.has(value)) return value;
    if (value.length > MAX_LABEL_LENGTH || seen.size >= MAX_LABEL_VALUES) return 'other';
    seen.add(value);
    return value;
  };
}

/** Creates the metrics in a registry of their own. */
export function createProxyMetrics(options: ProxyMetricsOptions): ProxyMetrics {
  const registry = new Registry();
  const registers = [registry];
  if (options.collectProcessMetrics !== false) {
    collectDefaultMetrics({
      register: registry,
      eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_INTERVAL_MS,
    });
  }
  const requests = new Counter({
    name: 'tpx_requests_total',
    help: 'Requests answered, by route, HTTP status, provider, requested model and upstream model.',
    labelNames: ['route', 'status', 'provider', 'model', 'upstream_model'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'tpx_exchange_duration_seconds',
    help: 'From request to the end of the answer (for a stream: its last frame), in seconds.',
    labelNames: ['route', 'provider', 'stream'] as const,
    buckets: DURATION_BUCKETS_SECONDS,
    registers,
  });
  const firstByte = new Histogram({
    name: 'tpx_time_to_first_byte_seconds',
    help: 'From request to the moment the answer starts going out (for a stream: its first event), in seconds.',
    labelNames: ['route', 'provider', 'stream'] as const,
    buckets: FIRST_BYTE_BUCKETS_SECONDS,
    registers,
  });
  const tokens = new Counter({
    name: 'tpx_tokens_total',
    help: 'Tokens reported by the upstream, by type: input, output, cache_creation, cache_read.',
    labelNames: ['provider', 'model', 'type'] as const,
    registers,
  });
  const attempts = new Counter({
    name: 'tpx_upstream_attempts_total',
    help: 'Upstream attempts, by the status the upstream answered (error: none came back).',
    labelNames: ['provider', 'status'] as const,
    registers,
  });
  const retries = new Counter({
    name: 'tpx_upstream_retries_total',
    help: 'Upstream attempts that were retries of an earlier one.',
    labelNames: ['provider'] as const,
    registers,
  });
  const errors = new Counter({
    name: 'tpx_errors_total',
    help: 'Exchanges that ended in an error, by MODEL_* code (also after a stream had started).',
    labelNames: ['provider', 'code'] as const,
    registers,
  });
  const openStreams = new Gauge({
    name: 'tpx_open_streams',
    help: 'Streamed answers in progress.',
    labelNames: ['provider'] as const,
    registers,
  });
  const tokenRefreshes = new Counter({
    name: 'tpx_token_refreshes_total',
    help: 'Token refreshes after the upstream refused a token, by token source and outcome.',
    labelNames: ['source', 'outcome'] as const,
    registers,
  });
  const modelLabel = boundedLabel();
  const upstreamModelLabel = boundedLabel();
  const provider = options.provider;
  // Pre-set the gauge so a scrape shows it at 0 before the first stream.
  openStreams.set({ provider }, 0);

  function startExchange(start: { path: string }): ExchangeTelemetry {
    const route = ROUTES.has(start.path) ? start.path : 'other';
    let upstreamModel: string | undefined;
    let isStreamOpen = false;
    const observer: ExchangeObserver = {
      onAttemptStart(attempt) {
        if (attempt.number > 1) retries.inc({ provider: attempt.provider });
      },
      onAttemptEnd(attempt) {
        attempts.inc({
          provider: attempt.provider,
          status: attempt.status === undefined ? 'error' : String(attempt.status),
        });
        if (attempt.upstreamModel !== undefined) upstreamModel = attempt.upstreamModel;
      },
    };
    return {
      observer,
      streamOpened() {
        isStreamOpen = true;
        openStreams.inc({ provider });
      },
      end({ record, timeToFirstByteMs }) {
        if (isStreamOpen) openStreams.dec({ provider });
        const model = modelLabel(record.model);
        requests.inc({
          route,
          status: String(record.status),
          provider: record.provider,
          model,
          upstream_model: upstreamModelLabel(upstreamModel),
        });
        const stream = record.stream === true ? 'true' : 'false';
        duration.observe({ route, provider: record.provider, stream }, record.durationMs / 1000);
        if (timeToFirstByteMs !== undefined) {
          firstByte.observe({ route, provider: record.provider, stream }, timeToFirstByteMs / 1000);
        }
        if (record.error !== undefined) errors.inc({ provider: record.provider, code: record.error });
        const usage = record.usage;
        if (usage !== undefined) {
          const labels = { provider: record.provider, model };
          // Upstream numbers are untrusted: a counter only ever grows, by a finite amount.
          const add = (type: string, count: number | undefined) => {
            if (count !== undefined && count > 0 && Number.isFinite(count))
              tokens.inc({ ...labels, type }, count);
          };
          add('input', usage.input_tokens);
          add('output', usage.output_tokens);
          add('cache_creation', usage.cache_creation_input_tokens);
          add('cache_read', usage.cache_read_input_tokens);
        }
      },
    };
  }

  return {
    registry,
    startExchange,
    transportObserver: {
      onTokenRefresh(refresh) {
        tokenRefreshes.inc({ source: refresh.source, outcome: refresh.outcome });
      },
    },
  };
}
