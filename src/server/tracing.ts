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
 * (default `tpx-serve`); the span batch delay from `OTEL_BSP_SCHEDULE_DELAY` (default 5000 ms) and the
 * metric export interval from `OTEL_METRIC_EXPORT_INTERVAL` (default 60000 ms).
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
  type Attributes,
  type Context,
  type Histogram,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
} from '@opentelemetry/api';
import { TransportError } from '../errors.js';
import type { ExchangeObserver } from '../providers/observer.js';
import type { ExchangeStart, ExchangeTelemetry, Telemetry } from './telemetry.js';

/** Default OTLP/HTTP endpoint (the OpenTelemetry specification's). */
const DEFAULT_ENDPOINT = 'http://localhost:4318';
const DEFAULT_SERVICE_NAME = 'tpx-serve';
const DEFAULT_METRIC_EXPORT_INTERVAL_MS = 60_000;
const DEFAULT_SCHEDULE_DELAY_MS = 5_000;

/** Bucket boundaries the GenAI semantic conventions advise for each histogram. */
const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];
const DURATION_BUCKETS_SECONDS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/** The routes that are model exchanges, and their `gen_ai.operation.name`. */
const OPERATIONS: ReadonlyMap<string, string> = new Map([
  ['/v1/messages', 'chat'],
  ['/v1/messages/count_tokens', 'count_tokens'],
  ['/v1/models', 'list_models'],
]);

type Protocol = 'http/protobuf' | 'http/json';

/** What the environment asks for, one signal at a time. */
export interface OtelSettings {
  traces?: { url: string; protocol: Protocol; scheduleDelayMs: number };
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
 * Reads the `OTEL_*` variables: which signals to export, where and how. A pure function of `env`.
 *
 * @throws TransportError `MODEL_ECONFIG` for a protocol other than OTLP over HTTP.
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
      const delay = Number(env['OTEL_BSP_SCHEDULE_DELAY']);
      settings.traces = {
        url: resolved,
        protocol,
        scheduleDelayMs: Number.isFinite(delay) && delay >= 0 ? delay : DEFAULT_SCHEDULE_DELAY_MS,
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
    case 'openai':
      return 'openai';
    case 'azure':
      return 'azure.ai.openai';
    case 'vertex':
      return 'gcp.vertex_ai';
    case 'gemini':
      return 'gcp.gemini';
    case 'mistral':
      return 'mistral_ai';
    case 'deepseek':
      return 'deepseek';
    case 'groq':
      return 'groq';
    default:
      // A self-hosted or aggregating server (vLLM, llama.cpp, Ollama, OpenRouter, …): the conventions
      // have no name for it, so its dialect profile is the most useful one.
      return dialect;
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
    const { TracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace');
    const { OTLPTraceExporter } =
      settings.traces.protocol === 'http/json'
        ? await import('@opentelemetry/exporter-trace-otlp-http')
        : await import('@opentelemetry/exporter-trace-otlp-proto');
    const provider = new TracerProvider({
      resource,
      spanProcessors: [
        new BatchSpanProcessor({
          exporter: new OTLPTraceExporter({ url: settings.traces.url }),
          scheduledDelayMillis: settings.traces.scheduleDelayMs,
        }),
      ],
    });
    tracer = provider.getTracer('tpx-transport', options.version);
    closers.push(() => provider.shutdown());
  }

  let tokenUsage: Histogram | undefined;
  let operationDuration: Histogram | undefined;
  if (settings.metrics !== undefined) {
    const { MeterProvider, PeriodicExportingMetricReader } = await import('@opentelemetry/sdk-metrics');
    const { OTLPMetricExporter } =
      settings.metrics.protocol === 'http/json'
        ? await import('@opentelemetry/exporter-metrics-otlp-http')
        : await import('@opentelemetry/exporter-metrics-otlp-proto');
    const provider = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({
          exporter: new OTLPMetricExporter({ url: settings.metrics.url }),
          exportIntervalMillis: settings.metrics.exportIntervalMs,
        }),
      ],
    });
    const meter = provider.getMeter('tpx-transport', options.version);
    tokenUsage = meter.createHistogram('gen_ai.client.token.usage', {
      description: 'Number of input and output tokens used.',
      unit: '{token}',
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    });
    operationDuration = meter.createHistogram('gen_ai.client.operation.duration', {
      description: 'GenAI operation duration.',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS_SECONDS },
    });
    closers.push(() => provider.shutdown());
  }

  const providerName = options.providerName;
  const skipped: ExchangeTelemetry = { streamOpened() {}, end() {} };

  function startExchange(start: ExchangeStart): ExchangeTelemetry {
    const operation = OPERATIONS.get(start.path);
    if (operation === undefined) return skipped;
    const parent = propagator.extract(ROOT_CONTEXT, start.headers, headerGetter);
    const startedMs = performance.now();
    const span = tracer?.startSpan(
      operation,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'gen_ai.operation.name': operation,
          'gen_ai.provider.name': providerName,
          'http.request.method': start.method,
          'url.path': start.path,
        },
      },
      parent,
    );
    const exchangeContext: Context = span === undefined ? parent : trace.setSpan(parent, span);
    const attempts = new Map<number, Span>();
    let responseModel: string | undefined;
    const activeTracer = tracer;
    const observer: ExchangeObserver | undefined =
      activeTracer === undefined
        ? {
            onAttemptEnd(attempt) {
              if (attempt.upstreamModel !== undefined) responseModel = attempt.upstreamModel;
            },
          }
        : {
            onAttemptStart(attempt) {
              const child = activeTracer.startSpan(
                `${operation} attempt ${attempt.number}`,
                {
                  kind: SpanKind.CLIENT,
                  attributes: { 'gen_ai.provider.name': providerName, 'tpx.attempt': attempt.number },
                },
                exchangeContext,
              );
              attempts.set(attempt.number, child);
              const carrier: Record<string, string> = {};
              propagator.inject(trace.setSpan(exchangeContext, child), carrier, carrierSetter);
              return carrier;
            },
            onAttemptEnd(attempt) {
              if (attempt.upstreamModel !== undefined) responseModel = attempt.upstreamModel;
              const child = attempts.get(attempt.number);
              if (child === undefined) return;
              attempts.delete(attempt.number);
              if (attempt.upstreamModel !== undefined) {
                child.setAttribute('gen_ai.request.model', attempt.upstreamModel);
              }
              if (attempt.status !== undefined)
                child.setAttribute('http.response.status_code', attempt.status);
              if (attempt.error !== undefined) {
                child.setAttribute('error.type', attempt.error.code);
                child.setStatus({ code: SpanStatusCode.ERROR, message: attempt.error.message });
              }
              child.end();
            },
          };
    return {
      ...(observer === undefined ? {} : { observer }),
      streamOpened() {},
      end({ record, stopReason }) {
        const usage = record.usage;
        const input = usage?.input_tokens;
        const output = usage?.output_tokens;
        if (operationDuration !== undefined && tokenUsage !== undefined) {
          const durationSeconds = (performance.now() - startedMs) / 1000;
          // Each record hashes its attributes (sorted keys, serialised): the objects are built whole,
          // once each, rather than spread from a common one.
          operationDuration.record(
            durationSeconds,
            metricAttributes(operation, record.model, responseModel, record.error, undefined),
          );
          if (input !== undefined && input >= 0 && Number.isFinite(input)) {
            tokenUsage.record(
              input,
              metricAttributes(operation, record.model, responseModel, record.error, 'input'),
            );
          }
          if (output !== undefined && output >= 0 && Number.isFinite(output)) {
            tokenUsage.record(
              output,
              metricAttributes(operation, record.model, responseModel, record.error, 'output'),
            );
          }
        }
        if (span === undefined) return;
        // The operation and provider were set when the span started; only what the end knows is added.
        if (record.model !== undefined) {
          span.updateName(`${operation} ${record.model}`);
          span.setAttribute('gen_ai.request.model', record.model);
        }
        if (responseModel !== undefined) span.setAttribute('gen_ai.response.model', responseModel);
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
        for (const child of attempts.values()) child.end();
        span.end();
      },
    };
  }

  /** The attributes of one GenAI metric measurement, in a new object (the SDK keeps it as a key). */
  function metricAttributes(
    operation: string,
    requestModel: string | undefined,
    responseModel: string | undefined,
    errorType: string | undefined,
    tokenType: 'input' | 'output' | undefined,
  ): Attributes {
    const attributes: Attributes = {
      'gen_ai.operation.name': operation,
      'gen_ai.provider.name': providerName,
    };
    if (requestModel !== undefined) attributes['gen_ai.request.model'] = requestModel;
    if (responseModel !== undefined) attributes['gen_ai.response.model'] = responseModel;
    if (errorType !== undefined) attributes['error.type'] = errorType;
    if (tokenType !== undefined) attributes['gen_ai.token.type'] = tokenType;
    return attributes;
  }

  return {
    settings,
    startExchange,
    async shutdown() {
      await Promise.allSettled(closers.map((close) => close()));
    },
  };
}
