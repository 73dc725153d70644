/**
 * The proxy's Prometheus metrics, with prom-client: what a team running agents through `tpx serve` wants
 * to graph and alert on. Every name starts with `tpx_`; the process metrics are prom-client's defaults,
 * with the event loop's delay measured by `event-loop-delay.ts`.
 *
 * | metric | type | labels |
 * |--------|------|--------|
 * | `tpx_requests_total` | counter | `route`, `status`, `provider`, `model`, `upstream_model` |
 * | `tpx_exchange_duration_seconds` | histogram | `route`, `provider`, `stream` |
 * | `tpx_time_to_first_byte_seconds` | histogram | `route`, `provider`, `stream` |
 * | `tpx_tokens_total` | counter | `provider`, `model`, `type` (`input`, `output`, `cache_creation`, `cache_read`) |
 * | `tpx_upstream_attempts_total` | counter | `provider`, `status` (`error` when none came back), `upstream` (with routes) |
 * | `tpx_upstream_breaker_state` | gauge | `upstream`, `state` (`closed`, `open`, `half-open`): 1 for the current one (with routes) |
 * | `tpx_upstream_retries_total` | counter | `provider` |
 * | `tpx_errors_total` | counter | `provider`, `code` (`MODEL_*`) |
 * | `tpx_tool_call_repairs_total` | counter | `provider`, `kind` (`syntax`, `types`, `syntax+types`, `text-call`) |
 * | `tpx_open_streams` | gauge | `provider` |
 * | `tpx_token_refreshes_total` | counter | `source`, `outcome` |
 * | `tpx_trace_spans_dropped_total` | counter | (with tracing on) spans dropped because the export queue was full |
 * | `tpx_trace_exports_failed_total` | counter | (with tracing on) span batches that could not be delivered |
 *
 * Labels that come from clients (the model) are bounded: at most {@link MAX_LABEL_VALUES} distinct values
 * per label, each at most {@link MAX_LABEL_LENGTH} characters; the rest count as `other`, so a client
 * cannot grow the scrape without bound. Routes outside the proxy's own are counted as `other` too.
 *
 * @module
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ProviderName } from '../errors.js';
import type { AttemptEnd, AttemptStart, ExchangeObserver, TransportObserver } from '../providers/observer.js';
import { EVENT_LOOP_DELAY_METRICS, registerEventLoopDelay } from './event-loop-delay.js';
import type { ExchangeOutcome, ExchangeStart, ExchangeTelemetry, Telemetry } from './exchange-telemetry.js';
import type { SpanExportLosses } from './span-export-losses.js';

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
 * How often the event-loop monitor samples the loop's delay, in ms (`event-loop-delay.ts`). prom-client's
 * own default, 10 ms, wakes an idle proxy a hundred times a second: that alone took its CPU at rest from
 * 1.5 to about 9 ms a second. At 100 ms it costs about 0.5 ms a second, and a scrape every 15 s still
 * summarises 150 samples (each measures the delay exactly; only the sampling is sparser).
 */
export const EVENT_LOOP_SAMPLE_INTERVAL_MS = 100;

/**
 * The resolution prom-client's own event-loop monitor is given, so that it never samples: it cannot be
 * left out of the default metrics, and its histogram gauges, which report the sampling interval as lag,
 * are replaced by those of `event-loop-delay.ts` (its timer then fires every 24.8 days).
 */
const NEVER_MS = 2 ** 31 - 1;

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
  /**
   * Counts what the span export loses (`tpx_trace_spans_dropped_total`, `tpx_trace_exports_failed_total`),
   * read from `losses` at each scrape. Once per process, when tracing is on.
   */
  countSpanExportLosses(losses: SpanExportLosses): void;
  /** With routes: reports each upstream's breaker (`tpx_upstream_breaker_state`), read at each scrape. */
  watchUpstreams(read: () => readonly { readonly name: string; readonly state: string }[]): void;
}

const BREAKER_STATES = ['closed', 'open', 'half-open'] as const;

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

/** Whether an upstream's token count may be added to a counter: positive and finite. */
function isTokenCount(count: number | undefined | null): count is number {
  return count !== undefined && count !== null && count > 0 && Number.isFinite(count);
}

/** The per-exchange metrics of one proxy process, shared by its exchanges. */
class ExchangeMetrics {
  readonly requests: Counter<'route' | 'status' | 'provider' | 'model' | 'upstream_model'>;
  readonly duration: Histogram<'route' | 'provider' | 'stream'>;
  readonly firstByte: Histogram<'route' | 'provider' | 'stream'>;
  readonly tokens: Counter<'provider' | 'model' | 'type'>;
  readonly attempts: Counter<'provider' | 'status' | 'upstream'>;
  readonly retries: Counter<'provider'>;
  readonly errors: Counter<'provider' | 'code'>;
  readonly repairs: Counter<'provider' | 'kind'>;
  readonly modelLabel = boundedLabel();
  readonly upstreamModelLabel = boundedLabel();
  /** Streamed answers in progress (the gauge reads it at a scrape). */
  openStreams = 0;

  /** Registers the metrics in `registry`, which lists them in the order they are made here. */
  constructor(registry: Registry) {
    const registers = [registry];
    this.requests = new Counter({
      name: 'tpx_requests_total',
      help: 'Requests answered, by route, HTTP status, provider, requested model and upstream model.',
      labelNames: ['route', 'status', 'provider', 'model', 'upstream_model'],
      registers,
    });
    this.duration = new Histogram({
      name: 'tpx_exchange_duration_seconds',
      help: 'From request to the end of the answer (for a stream: its last frame), in seconds.',
      labelNames: ['route', 'provider', 'stream'],
      buckets: DURATION_BUCKETS_SECONDS,
      registers,
    });
    this.firstByte = new Histogram({
      name: 'tpx_time_to_first_byte_seconds',
      help: 'From request to the moment the answer starts going out (for a stream: its first event), in seconds.',
      labelNames: ['route', 'provider', 'stream'],
      buckets: FIRST_BYTE_BUCKETS_SECONDS,
      registers,
    });
    this.tokens = new Counter({
      name: 'tpx_tokens_total',
      help: 'Tokens reported by the upstream, by type: input, output, cache_creation, cache_read.',
      labelNames: ['provider', 'model', 'type'],
      registers,
    });
    this.attempts = new Counter({
      name: 'tpx_upstream_attempts_total',
      help: 'Upstream attempts, by the status the upstream answered (error: none came back).',
      labelNames: ['provider', 'status', 'upstream'],
      registers,
    });
    this.retries = new Counter({
      name: 'tpx_upstream_retries_total',
      help: 'Upstream attempts that were retries of an earlier one.',
      labelNames: ['provider'],
      registers,
    });
    this.errors = new Counter({
      name: 'tpx_errors_total',
      help: 'Exchanges that ended in an error, by MODEL_* code (also after a stream had started).',
      labelNames: ['provider', 'code'],
      registers,
    });
    this.repairs = new Counter({
      name: 'tpx_tool_call_repairs_total',
      help:
        'Tool calls delivered after a repair: arguments made JSON (syntax), scalars fitted to the schema ' +
        '(types), or a call the model wrote as text (text-call).',
      labelNames: ['provider', 'kind'],
      registers,
    });
  }
}

/** One exchange's metrics: an object that is its own observer. */
class MeteredExchange implements ExchangeTelemetry, ExchangeObserver {
  readonly observer: ExchangeObserver = this;
  readonly #metrics: ExchangeMetrics;
  readonly #route: string;
  #upstreamModel: string | undefined;
  #isStreamOpen = false;

  constructor(metrics: ExchangeMetrics, route: string) {
    this.#metrics = metrics;
    this.#route = route;
  }

  onAttemptStart(attempt: AttemptStart): void {
    if (attempt.number > 1) this.#metrics.retries.inc({ provider: attempt.provider });
  }

  onAttemptEnd(attempt: AttemptEnd): void {
    const labels = { provider: attempt.provider, status: attempt.status ?? 'error' };
    // Upstream names come from the routes file, not from clients: a bounded set.
    this.#metrics.attempts.inc(
      attempt.upstream === undefined ? labels : { ...labels, upstream: attempt.upstream },
    );
    if (attempt.upstreamModel !== undefined) this.#upstreamModel = attempt.upstreamModel;
    for (const repair of attempt.repairs ?? []) {
      this.#metrics.repairs.inc({ provider: attempt.provider, kind: repair.kind });
    }
  }

  streamOpened(): void {
    this.#isStreamOpen = true;
    this.#metrics.openStreams += 1;
  }

  end({ record, timeToFirstByteMs }: ExchangeOutcome): void {
    const metrics = this.#metrics;
    if (this.#isStreamOpen) metrics.openStreams -= 1;
    const { provider } = record;
    const route = this.#route;
    const model = metrics.modelLabel(record.model);
    const upstreamModel = metrics.upstreamModelLabel(this.#upstreamModel);
    metrics.requests.inc({ route, status: record.status, provider, model, upstream_model: upstreamModel });
    const timing = { route, provider, stream: record.stream === true ? 'true' : 'false' };
    metrics.duration.observe(timing, record.durationMs / 1000);
    if (timeToFirstByteMs !== undefined) metrics.firstByte.observe(timing, timeToFirstByteMs / 1000);
    if (record.error !== undefined) metrics.errors.inc({ provider, code: record.error });
    const usage = record.usage ?? {};
    // Upstream numbers are untrusted: a counter only ever grows, by a finite amount.
    for (const [type, count] of [
      ['input', usage.input_tokens],
      ['output', usage.output_tokens],
      ['cache_creation', usage.cache_creation_input_tokens],
      ['cache_read', usage.cache_read_input_tokens],
    ] as const) {
      if (isTokenCount(count)) metrics.tokens.inc({ provider, model, type }, count);
    }
  }
}

/** A counter read at each scrape from `read` (a count kept elsewhere), 0 until then. */
function countedAtScrape(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      const count = read();
      if (count > 0) this.inc(count);
    },
  });
}

/** Creates the metrics in a registry of their own. */
export function createProxyMetrics(options: ProxyMetricsOptions): ProxyMetrics {
  const registry = new Registry();
  if (options.collectProcessMetrics !== false) {
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: NEVER_MS });
    for (const name of EVENT_LOOP_DELAY_METRICS) registry.removeSingleMetric(name);
    registerEventLoopDelay(registry, EVENT_LOOP_SAMPLE_INTERVAL_MS);
  }
  const { provider } = options;
  const metrics = new ExchangeMetrics(registry);
  new Gauge({
    name: 'tpx_open_streams',
    help: 'Streamed answers in progress.',
    labelNames: ['provider'] as const,
    registers: [registry],
    // Read at a scrape, so a scrape shows it (at 0) before the first stream too.
    collect() {
      this.set({ provider }, metrics.openStreams);
    },
  });
  const tokenRefreshes = new Counter({
    name: 'tpx_token_refreshes_total',
    help: 'Token refreshes after the upstream refused a token, by token source and outcome.',
    labelNames: ['source', 'outcome'] as const,
    registers: [registry],
  });
  return {
    registry,
    startExchange: (start: ExchangeStart) =>
      new MeteredExchange(metrics, ROUTES.has(start.path) ? start.path : 'other'),
    transportObserver: {
      onTokenRefresh(refresh) {
        tokenRefreshes.inc({ source: refresh.source, outcome: refresh.outcome });
      },
    },
    watchUpstreams(read) {
      new Gauge({
        name: 'tpx_upstream_breaker_state',
        help: "Each upstream's circuit breaker: 1 for its current state (closed, open: skipped for a cool-down, half-open: one probe may go).",
        labelNames: ['upstream', 'state'] as const,
        registers: [registry],
        collect() {
          for (const upstream of read()) {
            for (const state of BREAKER_STATES) {
              this.set({ upstream: upstream.name, state }, upstream.state === state ? 1 : 0);
            }
          }
        },
      });
    },
    countSpanExportLosses(losses) {
      countedAtScrape(
        registry,
        'tpx_trace_spans_dropped_total',
        'Finished spans dropped because the span export queue was full (OTEL_BSP_MAX_QUEUE_SIZE): the collector is away or slower than the traffic.',
        () => losses.droppedSpans,
      );
      countedAtScrape(
        registry,
        'tpx_trace_exports_failed_total',
        'Span batches that could not be delivered: the collector refused them, could not be reached, or took longer than OTEL_BSP_EXPORT_TIMEOUT.',
        () => losses.failedExports,
      );
    },
  };
}
