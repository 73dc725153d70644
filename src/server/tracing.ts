/**
 * OpenTelemetry for the proxy, through `@opentelemetry/api`: one span per exchange following the GenAI
 * semantic conventions, a child span per upstream attempt, and the GenAI client metrics
 * (`gen_ai.client.token.usage`, `gen_ai.client.operation.duration`).
 *
 * Off unless the standard `OTEL_*` variables configure an OTLP exporter (over HTTP):
 *
 * | variables | traces | metrics |
 * |-----------|--------|---------|
 * | `OTEL_SDK_DISABLED=true` | off | off |
 * | `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` = `none` (or anything but `otlp`) | off | off |
 * | `…_EXPORTER=otlp` | on | on |
 * | `OTEL_EXPORTER_OTLP_ENDPOINT`, or the signal's own `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `…_METRICS_ENDPOINT` | on | on |
 * | none of these | off | off |
 *
 * The protocol is `OTEL_EXPORTER_OTLP_[TRACES_|METRICS_]PROTOCOL`: `http/protobuf` (the default) or
 * `http/json`; `grpc` is refused at start-up. The endpoint defaults to `http://localhost:4318`. Headers,
 * timeout and compression come from the usual `OTEL_EXPORTER_OTLP_*` variables of the process, read by
 * the exporters themselves; the service name from `OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES`
 * (default `tpx-serve`); the span batches from `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_BSP_EXPORT_TIMEOUT`,
 * `OTEL_BSP_MAX_QUEUE_SIZE` and `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` (the specification's defaults: 5000 ms,
 * 30000 ms, 2048 and 512 spans), and the metric export interval from `OTEL_METRIC_EXPORT_INTERVAL`
 * (default 60000 ms).
 *
 * An incoming W3C `traceparent` (and `tracestate`) is continued: the exchange span is its child. Each
 * upstream attempt sends its own span's `traceparent` upstream, so a traced model server joins the trace.
 * The SDK is loaded only when tracing is on: with it off, none of this code runs.
 *
 * @module
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapPropagator,
  type TextMapSetter,
  type Tracer,
} from '@opentelemetry/api';
import type * as TraceSdk from '@opentelemetry/sdk-trace';
import { TransportError } from '../errors.js';
import type { AttemptEnd, AttemptStart, ExchangeObserver } from '../providers/observer.js';
import { GenAiHistograms } from './genai-histograms.js';
import type { ExchangeOutcome, ExchangeStart, ExchangeTelemetry, Telemetry } from './telemetry.js';

/** Default OTLP/HTTP endpoint (the OpenTelemetry specification's). */
const DEFAULT_ENDPOINT = 'http://localhost:4318';
const DEFAULT_SERVICE_NAME = 'tpx-serve';
const DEFAULT_METRIC_EXPORT_INTERVAL_MS = 60_000;

/**
 * The span batches, `OTEL_BSP_*`: the specification's defaults. A batch is exported when it is full or
 * when the delay has passed since the first span waiting; at most the queue's worth of spans waits
 * (more are dropped, and counted as dropped, rather than held without bound while a collector is away).
 */
const BATCH_DEFAULTS: SpanBatchSettings = {
  scheduleDelayMs: 5_000,
  exportTimeoutMs: 30_000,
  maxQueueSize: 2048,
  maxExportBatchSize: 512,
};

/** How spans are batched for export (`OTEL_BSP_*`). */
export interface SpanBatchSettings {
  /** `OTEL_BSP_SCHEDULE_DELAY`: the longest a finished span waits for its batch, ms. */
  scheduleDelayMs: number;
  /** `OTEL_BSP_EXPORT_TIMEOUT`: how long one export may take, ms. */
  exportTimeoutMs: number;
  /** `OTEL_BSP_MAX_QUEUE_SIZE`: the most spans waiting; more are dropped. */
  maxQueueSize: number;
  /** `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`: the most spans in one export (never more than the queue). */
  maxExportBatchSize: number;
}

/** The routes that are model exchanges, and their `gen_ai.operation.name`. */
const OPERATIONS: ReadonlyMap<string, string> = new Map([
  ['/v1/messages', 'chat'],
  ['/v1/messages/count_tokens', 'count_tokens'],
  ['/v1/models', 'list_models'],
]);

type Protocol = 'http/protobuf' | 'http/json';

/** The samplers of the specification's `OTEL_TRACES_SAMPLER` that a process can apply on its own. */
const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/**
 * Which exchanges are traced (`OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`). The default is the
 * specification's: follow the caller's sampled flag, trace every exchange that has no parent.
 */
export interface SamplerSettings {
  name: (typeof SAMPLERS)[number];
  /** For the two ratio samplers: the share of traces recorded, from 0 to 1 (default 1). */
  ratio?: number;
}

/** What the environment asks for, one signal at a time. */
export interface OtelSettings {
  traces?: { url: string; protocol: Protocol; sampler: SamplerSettings } & SpanBatchSettings;
  metrics?: { url: string; protocol: Protocol; exportIntervalMs: number };
  serviceName: string;
}

function readProtocol(env: Record<string, string | undefined>, signal: 'TRACES' | 'METRICS'): Protocol {
  const name = `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`;
  const value = (env[name] ?? env['OTEL_EXPORTER_OTLP_PROTOCOL'] ?? 'http/protobuf').trim();
  if (value === 'http/protobuf' || value === 'http/json') return value;
  throw new TransportError(
    'MODEL_ECONFIG',
    `${env[name] === undefined ? 'OTEL_EXPORTER_OTLP_PROTOCOL' : name} is ${JSON.stringify(value)}: tpx serve exports OTLP over HTTP only, as http/protobuf (the default) or http/json`,
  );
}

function signalUrl(
  env: Record<string, string | undefined>,
  signal: 'TRACES' | 'METRICS',
  path: string,
): string | undefined {
  const own = env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`];
  if (own !== undefined && own !== '') return own;
  const base = env['OTEL_EXPORTER_OTLP_ENDPOINT'];
  if (base !== undefined && base !== '') return `${base.replace(/\/+$/, '')}/${path}`;
  return undefined;
}

/**
 * A numeric `OTEL_*` variable: its value when it is a number `isValid` accepts, else the default (as
 * the specification asks of an invalid value: it is ignored, not fatal).
 */
function readNumber(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
  isValid: (value: number) => boolean,
): number {
  const text = env[name]?.trim();
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  return Number.isFinite(value) && isValid(value) ? value : fallback;
}

function readSpanBatchSettings(env: Record<string, string | undefined>): SpanBatchSettings {
  const isCount = (value: number) => Number.isInteger(value) && value > 0;
  const maxQueueSize = readNumber(env, 'OTEL_BSP_MAX_QUEUE_SIZE', BATCH_DEFAULTS.maxQueueSize, isCount);
  const maxExportBatchSize = readNumber(
    env,
    'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
    BATCH_DEFAULTS.maxExportBatchSize,
    isCount,
  );
  return {
    scheduleDelayMs: readNumber(
      env,
      'OTEL_BSP_SCHEDULE_DELAY',
      BATCH_DEFAULTS.scheduleDelayMs,
      (value) => value >= 0,
    ),
    exportTimeoutMs: readNumber(
      env,
      'OTEL_BSP_EXPORT_TIMEOUT',
      BATCH_DEFAULTS.exportTimeoutMs,
      (value) => value > 0,
    ),
    maxQueueSize,
    // The specification: a batch larger than the queue is the queue.
    maxExportBatchSize: Math.min(maxExportBatchSize, maxQueueSize),
  };
}

function readSampler(env: Record<string, string | undefined>): SamplerSettings {
  const given = env['OTEL_TRACES_SAMPLER']?.trim().toLowerCase();
  const name = given === undefined || given === '' ? 'parentbased_always_on' : given;
  const known = SAMPLERS.find((sampler) => sampler === name);
  if (known === undefined) {
    throw new TransportError(
      'MODEL_ECONFIG',
      `OTEL_TRACES_SAMPLER is ${JSON.stringify(env['OTEL_TRACES_SAMPLER'])}: tpx serve supports ${SAMPLERS.join(', ')}`,
    );
  }
  if (!known.endsWith('traceidratio')) return { name: known };
  // An invalid ratio is ignored, as the specification asks: every trace is then kept.
  return {
    name: known,
    ratio: readNumber(env, 'OTEL_TRACES_SAMPLER_ARG', 1, (value) => value >= 0 && value <= 1),
  };
}

/**
 * Reads the `OTEL_*` variables: which signals to export, where and how. A pure function of `env`.
 *
 * @throws TransportError `MODEL_ECONFIG` for a protocol other than OTLP over HTTP, or a sampler this
 * process cannot apply on its own (`jaeger_remote`, `xray`, …).
 */
export function readOtelSettings(env: Record<string, string | undefined>): OtelSettings {
  const serviceName = env['OTEL_SERVICE_NAME'] || DEFAULT_SERVICE_NAME;
  const settings: OtelSettings = { serviceName };
  if ((env['OTEL_SDK_DISABLED'] ?? '').trim().toLowerCase() === 'true') return settings;
  for (const signal of ['TRACES', 'METRICS'] as const) {
    const exporter = env[`OTEL_${signal}_EXPORTER`]?.trim().toLowerCase();
    const path = signal === 'TRACES' ? 'v1/traces' : 'v1/metrics';
    const url = signalUrl(env, signal, path);
    const exporters =
      exporter === undefined || exporter === '' ? [] : exporter.split(',').map((x) => x.trim());
    const isOn = exporters.length > 0 ? exporters.includes('otlp') : url !== undefined;
    if (!isOn) continue;
    const resolved = url ?? `${DEFAULT_ENDPOINT}/${path}`;
    const protocol = readProtocol(env, signal);
    if (signal === 'TRACES') {
      settings.traces = {
        url: resolved,
        protocol,
        sampler: readSampler(env),
        ...readSpanBatchSettings(env),
      };
    } else {
      const interval = Number(env['OTEL_METRIC_EXPORT_INTERVAL']);
      settings.metrics = {
        url: resolved,
        protocol,
        exportIntervalMs:
          Number.isFinite(interval) && interval > 0 ? interval : DEFAULT_METRIC_EXPORT_INTERVAL_MS,
      };
    }
  }
  return settings;
}

/** Running OpenTelemetry: per-exchange telemetry, and a shutdown that flushes what is buffered. */
export interface Tracing extends Telemetry {
  readonly settings: OtelSettings;
  /** Exports what is still buffered, then stops. */
  shutdown(): Promise<void>;
}

/** Options of {@link startTracing}. */
export interface TracingOptions {
  /** `gen_ai.provider.name`: `anthropic`, `openai`, … (see `genAiProviderName`). */
  providerName: string;
  /** The instrumentation's version, on every span. */
  version?: string;
}

const carrierSetter: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

const headerGetter: TextMapGetter<ExchangeStart['headers']> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key.toLowerCase()],
};

/** Maps the transport's provider and dialect to the GenAI conventions' `gen_ai.provider.name`. */
export function genAiProviderName(provider: string, dialect: string | undefined): string {
  if (provider !== 'tpx' || dialect === undefined) return provider === 'tpx' ? 'openai-compatible' : provider;
  switch (dialect) {
    case 'azure':
      return 'azure.ai.openai';
    case 'vertex':
      return 'gcp.vertex_ai';
    case 'gemini':
      return 'gcp.gemini';
    case 'mistral':
      return 'mistral_ai';
    default:
      // The conventions name `openai`, `deepseek` and `groq` as their dialects are named. A self-hosted
      // or aggregating server (vLLM, llama.cpp, Ollama, OpenRouter, …) has no name there, so its dialect
      // profile is the most useful one.
      return dialect;
  }
}

/** What every exchange of a running tracing shares. */
interface Instruments {
  readonly providerName: string;
  readonly propagator: TextMapPropagator;
  readonly tracer?: Tracer;
  readonly histograms?: GenAiHistograms;
}

/** The telemetry of a route that is not a model exchange: nothing. */
const SKIPPED: ExchangeTelemetry = { streamOpened() {}, end() {} };

/**
 * One exchange's span, its attempts' child spans, and its GenAI measurements. One object per exchange
 * that is its own observer: no closure, map or context is made per exchange beyond what the spans need.
 */
class TracedExchange implements ExchangeTelemetry, ExchangeObserver {
  readonly observer: ExchangeObserver = this;
  readonly #instruments: Instruments;
  readonly #operation: string;
  readonly #startedMs = performance.now();
  readonly #span: Span | undefined;
  /** The parent of the attempts' spans: the exchange span's context (made at the first attempt). */
  #exchangeContext: Context | undefined;
  readonly #parent: Context;
  #responseModel: string | undefined;
  /** The attempt in flight (attempts follow one another), and any that overlapped it, by number. */
  #attemptNumber = 0;
  #attemptSpan: Span | undefined;
  #overlapping: Map<number, Span> | undefined;

  constructor(instruments: Instruments, operation: string, start: ExchangeStart) {
    this.#instruments = instruments;
    this.#operation = operation;
    const parent = instruments.propagator.extract(ROOT_CONTEXT, start.headers, headerGetter);
    this.#parent = parent;
    this.#span = instruments.tracer?.startSpan(
      operation,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'gen_ai.operation.name': operation,
          'gen_ai.provider.name': instruments.providerName,
          'http.request.method': start.method,
          'url.path': start.path,
        },
      },
      parent,
    );
  }

  onAttemptStart(attempt: AttemptStart): Record<string, string> | undefined {
    const tracer = this.#instruments.tracer;
    if (tracer === undefined || this.#span === undefined) return undefined;
    this.#exchangeContext ??= trace.setSpan(this.#parent, this.#span);
    if (!this.#span.isRecording()) {
      // Not sampled: no attempt span (it would not be recorded either); the upstream still learns the
      // trace, and that it is not sampled.
      const carrier: Record<string, string> = {};
      this.#instruments.propagator.inject(this.#exchangeContext, carrier, carrierSetter);
      return carrier;
    }
    const child = tracer.startSpan(
      `${this.#operation} attempt ${attempt.number}`,
      {
        kind: SpanKind.CLIENT,
        attributes: { 'gen_ai.provider.name': this.#instruments.providerName, 'tpx.attempt': attempt.number },
      },
      this.#exchangeContext,
    );
    if (this.#attemptSpan !== undefined) {
      this.#overlapping ??= new Map();
      this.#overlapping.set(this.#attemptNumber, this.#attemptSpan);
    }
    this.#attemptNumber = attempt.number;
    this.#attemptSpan = child;
    const carrier: Record<string, string> = {};
    this.#instruments.propagator.inject(trace.setSpan(this.#exchangeContext, child), carrier, carrierSetter);
    return carrier;
  }

  onAttemptEnd(attempt: AttemptEnd): void {
    if (attempt.upstreamModel !== undefined) this.#responseModel = attempt.upstreamModel;
    let child: Span | undefined;
    if (this.#attemptSpan !== undefined && this.#attemptNumber === attempt.number) {
      child = this.#attemptSpan;
      this.#attemptSpan = undefined;
    } else {
      child = this.#overlapping?.get(attempt.number);
      this.#overlapping?.delete(attempt.number);
    }
    if (child === undefined) return;
    if (attempt.upstreamModel !== undefined)
      child.setAttribute('gen_ai.request.model', attempt.upstreamModel);
    if (attempt.status !== undefined) child.setAttribute('http.response.status_code', attempt.status);
    if (attempt.error !== undefined) {
      child.setAttribute('error.type', attempt.error.code);
      child.setStatus({ code: SpanStatusCode.ERROR, message: attempt.error.message });
    }
    child.end();
  }

  streamOpened(): void {}

  end({ record, stopReason }: ExchangeOutcome): void {
    const usage = record.usage;
    const input = usage?.input_tokens;
    const output = usage?.output_tokens;
    this.#instruments.histograms?.record(
      this.#operation,
      record.model,
      this.#responseModel,
      record.error,
      (performance.now() - this.#startedMs) / 1000,
      input,
      output,
    );
    const span = this.#span;
    if (span === undefined || !span.isRecording()) return;
    // The operation and provider were set when the span started; only what the end knows is added.
    if (record.model !== undefined) {
      span.updateName(`${this.#operation} ${record.model}`);
      span.setAttribute('gen_ai.request.model', record.model);
    }
    if (this.#responseModel !== undefined) span.setAttribute('gen_ai.response.model', this.#responseModel);
    span.setAttribute('http.response.status_code', record.status);
    span.setAttribute('tpx.request_id', record.requestId);
    if (input !== undefined) span.setAttribute('gen_ai.usage.input_tokens', input);
    if (output !== undefined) span.setAttribute('gen_ai.usage.output_tokens', output);
    if (stopReason !== undefined) span.setAttribute('gen_ai.response.finish_reasons', [stopReason]);
    if (record.error !== undefined) {
      span.setAttribute('error.type', record.error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: record.errorMessage ?? record.error });
    }
    // An attempt the transport never ended (it cannot happen, but a span left open is never exported).
    this.#attemptSpan?.end();
    for (const child of this.#overlapping?.values() ?? []) child.end();
    span.end();
  }
}

/** The SDK's sampler for `settings`. */
function makeSampler(sdk: typeof TraceSdk, settings: SamplerSettings) {
  const ratio = new sdk.TraceIdRatioBasedSampler(settings.ratio ?? 1);
  switch (settings.name) {
    case 'always_on':
      return new sdk.AlwaysOnSampler();
    case 'always_off':
      return new sdk.AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_on':
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new sdk.ParentBasedSampler({ root: ratio });
  }
}

/**
 * Starts OpenTelemetry as the `OTEL_*` variables in `env` say, or resolves to `undefined` when they
 * configure no exporter.
 *
 * @throws TransportError `MODEL_ECONFIG` for an unsupported protocol.
 */
export async function startTracing(
  env: Record<string, string | undefined>,
  options: TracingOptions,
): Promise<Tracing | undefined> {
  const settings = readOtelSettings(env);
  if (settings.traces === undefined && settings.metrics === undefined) return undefined;
  const [{ W3CTraceContextPropagator }, resources] = await Promise.all([
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
  ]);
  const resource = resources
    .resourceFromAttributes({ 'service.name': settings.serviceName })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const propagator = new W3CTraceContextPropagator();
  const closers: (() => Promise<void>)[] = [];

  let tracer: Tracer | undefined;
  if (settings.traces !== undefined) {
    const sdk = await import('@opentelemetry/sdk-trace');
    const { TracerProvider, BatchSpanProcessor } = sdk;
    const { OTLPTraceExporter } =
      settings.traces.protocol === 'http/json'
        ? await import('@opentelemetry/exporter-trace-otlp-http')
        : await import('@opentelemetry/exporter-trace-otlp-proto');
    const provider = new TracerProvider({
      resource,
      sampler: makeSampler(sdk, settings.traces.sampler),
      spanProcessors: [
        new BatchSpanProcessor({
          exporter: new OTLPTraceExporter({ url: settings.traces.url }),
          scheduledDelayMillis: settings.traces.scheduleDelayMs,
          exportTimeoutMillis: settings.traces.exportTimeoutMs,
          maxQueueSize: settings.traces.maxQueueSize,
          maxExportBatchSize: settings.traces.maxExportBatchSize,
        }),
      ],
    });
    tracer = provider.getTracer('tpx-transport', options.version);
    closers.push(() => provider.shutdown());
  }

  let histograms: GenAiHistograms | undefined;
  if (settings.metrics !== undefined) {
    const sdk = await import('@opentelemetry/sdk-metrics');
    const { OTLPMetricExporter } =
      settings.metrics.protocol === 'http/json'
        ? await import('@opentelemetry/exporter-metrics-otlp-http')
        : await import('@opentelemetry/exporter-metrics-otlp-proto');
    // The GenAI histograms are aggregated by tpx (`genai-histograms.ts`) and collected by the reader; the
    // meter provider has no instrument of its own, it runs the reader and carries the resource.
    const exporter = new OTLPMetricExporter({ url: settings.metrics.url });
    histograms = new GenAiHistograms({
      providerName: options.providerName,
      ...(options.version === undefined ? {} : { version: options.version }),
      resource,
      sdk,
      temporality: exporter.selectAggregationTemporality(sdk.InstrumentType.HISTOGRAM),
    });
    const provider = new sdk.MeterProvider({
      resource,
      readers: [
        new sdk.PeriodicExportingMetricReader({
          exporter,
          exportIntervalMillis: settings.metrics.exportIntervalMs,
          metricProducers: [histograms],
        }),
      ],
    });
    closers.push(() => provider.shutdown());
  }

  const instruments: Instruments = {
    providerName: options.providerName,
    propagator,
    ...(tracer === undefined ? {} : { tracer }),
    ...(histograms === undefined ? {} : { histograms }),
  };

  function startExchange(start: ExchangeStart): ExchangeTelemetry {
    const operation = OPERATIONS.get(start.path);
    if (operation === undefined) return SKIPPED;
    return new TracedExchange(instruments, operation, start);
  }

  return {
    settings,
    startExchange,
    async shutdown() {
      await Promise.allSettled(closers.map((close) => close()));
    },
  };
}
