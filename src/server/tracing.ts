/**
 * OpenTelemetry for the proxy: one span per exchange following the GenAI semantic conventions, a child
 * span per upstream attempt, and the GenAI client metrics (`gen_ai.client.token.usage`,
 * `gen_ai.client.operation.duration`). The spans are tpx's own records (`recorded-span.ts`), encoded to
 * OTLP a few dozen at a time soon after they end and sent in batches with OpenTelemetry's OTLP HTTP
 * transport (`otlp-span-exporter.ts`); the histograms are tpx's own too (`genai-histograms.ts`),
 * collected and exported by the OpenTelemetry metrics SDK's periodic reader.
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
 * OpenTelemetry's OTLP HTTP transport as for its own exporters; the service name from `OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES`
 * (default `tpx-serve`); the span batches from `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_BSP_EXPORT_TIMEOUT`,
 * `OTEL_BSP_MAX_QUEUE_SIZE` and `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` (the specification's defaults: 5000 ms,
 * 30000 ms, 2048 and 512 spans), and the metric export interval from `OTEL_METRIC_EXPORT_INTERVAL`
 * (default 60000 ms).
 *
 * An incoming W3C `traceparent` (and `tracestate`) is continued: the exchange span is its child. Each
 * upstream attempt sends its own span's `traceparent` upstream, so a traced model server joins the trace.
 * The OpenTelemetry packages are loaded only when tracing is on: with it off, none of this code runs.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import {
  isSpanContextValid,
  ROOT_CONTEXT,
  trace,
  TraceFlags,
  type Attributes,
  type TextMapGetter,
  type TextMapPropagator,
} from '@opentelemetry/api';
import { TransportError } from '../errors.js';
import type { AttemptEnd, AttemptStart, ExchangeObserver } from '../providers/observer.js';
import { GenAiHistograms } from './genai-histograms.js';
import {
  newSpanId,
  newTraceId,
  nowUnixMs,
  RecordedSpan,
  SPAN_KIND_CLIENT,
  SPAN_KIND_SERVER,
  type ParentSpan,
  type SpanAttributeValue,
} from './recorded-span.js';
import { SpanContextId } from './span-context-id.js';
import { formatTraceparent } from './traceparent.js';
import { PresetAttributes } from './preset-attributes.js';
import { SpanBatches, type SpanBatchSettings, type SpanExportLosses } from './span-batches.js';
import { isTraceSampled, SAMPLERS, type SamplerSettings } from './trace-sampler.js';
import type { ExchangeOutcome, ExchangeStart, ExchangeTelemetry, Telemetry } from './telemetry.js';

export type { SpanBatchSettings } from './span-batches.js';
export type { SamplerSettings } from './trace-sampler.js';

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

/** The routes that are model exchanges, and their `gen_ai.operation.name`. */
const OPERATIONS: ReadonlyMap<string, string> = new Map([
  ['/v1/messages', 'chat'],
  ['/v1/messages/count_tokens', 'count_tokens'],
  ['/v1/models', 'list_models'],
]);

type Protocol = 'http/protobuf' | 'http/json';

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
  /** What the span export has lost so far; absent when traces are off (metrics only). */
  readonly spanExportLosses?: SpanExportLosses;
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
  /** Where finished spans go, and which exchanges are recorded; absent when traces are off. */
  readonly spans?: { readonly batches: SpanBatches; readonly sampler: SamplerSettings };
  readonly histograms?: GenAiHistograms;
  /** The preset attributes of exchange spans, by path and method (see {@link exchangePreset}). */
  readonly exchangePresets: Map<string, Map<string, PresetAttributes>>;
  /** The preset attributes of attempt spans, by attempt number. */
  readonly attemptPresets: PresetAttributes[];
  /** Attempt spans' names (`chat attempt 1`), by operation and attempt number. */
  readonly attemptNames: Map<string, string[]>;
  /** The latest exchange span's name, and the operation and model it was made of. */
  latestName: { operation: string; model: string; name: string } | undefined;
}

/**
 * Preset attributes kept, of each kind: a path is one of the few model routes and a method one the
 * HTTP parser knows, attempts are few; past the bound a span gets preset attributes of its own.
 */
const MAX_PRESETS = 64;

/** An exchange span's first attributes: its operation, the provider, its method and path. */
function exchangePreset(instruments: Instruments, operation: string, start: ExchangeStart): PresetAttributes {
  let byMethod = instruments.exchangePresets.get(start.path);
  const known = byMethod?.get(start.method);
  if (known !== undefined) return known;
  const preset = new PresetAttributes([
    'gen_ai.operation.name',
    operation,
    'gen_ai.provider.name',
    instruments.providerName,
    'http.request.method',
    start.method,
    'url.path',
    start.path,
  ]);
  if (byMethod === undefined && instruments.exchangePresets.size < MAX_PRESETS) {
    byMethod = new Map();
    instruments.exchangePresets.set(start.path, byMethod);
  }
  if (byMethod !== undefined && byMethod.size < MAX_PRESETS) byMethod.set(start.method, preset);
  return preset;
}

/** An attempt span's first attributes: the provider and the attempt's number. */
function attemptPreset(instruments: Instruments, number: number): PresetAttributes {
  const known = instruments.attemptPresets[number];
  if (known !== undefined) return known;
  const preset = new PresetAttributes([
    'gen_ai.provider.name',
    instruments.providerName,
    'tpx.attempt',
    number,
  ]);
  if (Number.isInteger(number) && number >= 0 && number < MAX_PRESETS)
    instruments.attemptPresets[number] = preset;
  return preset;
}

/** An attempt span's name: its operation and number, made once for each. */
function attemptName(instruments: Instruments, operation: string, number: number): string {
  let byNumber = instruments.attemptNames.get(operation);
  const known = byNumber?.[number];
  if (known !== undefined) return known;
  const name = `${operation} attempt ${number}`;
  if (byNumber === undefined && instruments.attemptNames.size < MAX_PRESETS) {
    byNumber = [];
    instruments.attemptNames.set(operation, byNumber);
  }
  if (byNumber !== undefined && Number.isInteger(number) && number >= 0 && number < MAX_PRESETS)
    byNumber[number] = name;
  return name;
}

/**
 * An exchange span's name: its operation and requested model. Consecutive exchanges mostly ask for the
 * same model, so the latest name is tried first.
 */
function exchangeName(instruments: Instruments, operation: string, model: string): string {
  const latest = instruments.latestName;
  if (latest !== undefined && latest.model === model && latest.operation === operation) return latest.name;
  const name = `${operation} ${model}`;
  instruments.latestName = { operation, model, name };
  return name;
}

/**
 * `gen_ai.response.finish_reasons` of one stop reason: one frozen array per reason, shared by every
 * span that ends that way. It tells the shared sets of `PresetAttributes.extended` apart, and once
 * those run out it goes on the span itself, where the protobuf encoding keeps a frozen array's field.
 */
const finishReasonArrays = new Map<string, readonly string[]>();
const MAX_FINISH_REASONS = 64;

/** The shared array of one stop reason, or `undefined` once as many reasons as allowed are kept. */
function sharedFinishReasons(stopReason: string): readonly string[] | undefined {
  const known = finishReasonArrays.get(stopReason);
  if (known !== undefined || finishReasonArrays.size >= MAX_FINISH_REASONS) return known;
  const reasons = Object.freeze([stopReason]);
  finishReasonArrays.set(stopReason, reasons);
  return reasons;
}

/**
 * What an exchange span's end adds that repeats from one exchange to the next: with the span's preset
 * attributes, one shared set (`PresetAttributes.extended`) for each distinct combination.
 */
const EXCHANGE_END_KEYS: readonly string[] = Object.freeze([
  'gen_ai.request.model',
  'gen_ai.response.model',
  'http.response.status_code',
  'gen_ai.response.finish_reasons',
]);
/** The same for an attempt span's end. */
const ATTEMPT_END_KEYS: readonly string[] = Object.freeze([
  'gen_ai.request.model',
  'http.response.status_code',
]);

/** The telemetry of a route that is not a model exchange: nothing. */
const SKIPPED: ExchangeTelemetry = { streamOpened() {}, end() {} };

/**
 * One exchange's span, its attempts' child spans, and its GenAI measurements. One object per exchange
 * that is its own observer: no closure, map or context is made per exchange beyond its spans.
 */
class TracedExchange implements ExchangeTelemetry, ExchangeObserver {
  readonly observer: ExchangeObserver = this;
  readonly #instruments: Instruments;
  readonly #operation: string;
  readonly #startedMs = performance.now();
  readonly #traceId: SpanContextId | undefined;
  readonly #traceState: string | undefined;
  /** The exchange span, when this exchange is recorded. */
  readonly #span: RecordedSpan | undefined;
  /** The span id told upstream when the exchange is not recorded (the trace goes on without it). */
  readonly #unrecordedSpanId: SpanContextId | undefined;
  #responseModel: string | undefined;
  /** The attempt in flight (attempts follow one another), and any that overlapped it, by number. */
  #attemptNumber = 0;
  #attemptSpan: RecordedSpan | undefined;
  #overlapping: Map<number, RecordedSpan> | undefined;

  constructor(instruments: Instruments, operation: string, start: ExchangeStart) {
    this.#instruments = instruments;
    this.#operation = operation;
    const spans = instruments.spans;
    if (spans === undefined) return;
    // Without a `traceparent` the propagator finds nothing (it ignores a lone `tracestate`, as W3C trace
    // context asks), so it is asked only when there is one: most exchanges start a trace of their own.
    const incoming = start.headers['traceparent']
      ? trace.getSpanContext(instruments.propagator.extract(ROOT_CONTEXT, start.headers, headerGetter))
      : undefined;
    let parent: ParentSpan | undefined;
    let isParentSampled = false;
    // The propagator accepts lower-case hex ids only (W3C trace context), so both spell bytes.
    const incomingTraceId = incoming === undefined ? undefined : SpanContextId.fromHex(incoming.traceId);
    const incomingSpanId = incoming === undefined ? undefined : SpanContextId.fromHex(incoming.spanId);
    if (
      incoming !== undefined &&
      incomingTraceId !== undefined &&
      incomingSpanId !== undefined &&
      isSpanContextValid(incoming)
    ) {
      this.#traceState = incoming.traceState?.serialize();
      parent = {
        traceId: incomingTraceId,
        spanId: incomingSpanId,
        traceState: this.#traceState,
        isRemote: true,
      };
      isParentSampled = (incoming.traceFlags & TraceFlags.SAMPLED) !== 0;
    }
    const traceId = parent?.traceId ?? newTraceId();
    this.#traceId = traceId;
    if (!isTraceSampled(spans.sampler, parent === undefined ? undefined : isParentSampled, traceId)) {
      this.#unrecordedSpanId = newSpanId();
      return;
    }
    this.#span = new RecordedSpan(
      traceId,
      parent,
      operation,
      SPAN_KIND_SERVER,
      exchangePreset(instruments, operation, start),
    );
  }

  /** The headers that carry this trace upstream: the attempt's span, or the unrecorded exchange's. */
  #carrier(spanId: SpanContextId, isSampled: boolean): Record<string, string> {
    const carrier: Record<string, string> = {
      traceparent: formatTraceparent(this.#traceId!, spanId, isSampled),
    };
    if (this.#traceState !== undefined && this.#traceState !== '') carrier['tracestate'] = this.#traceState;
    return carrier;
  }

  onAttemptStart(attempt: AttemptStart): Record<string, string> | undefined {
    if (this.#instruments.spans === undefined) return undefined;
    const span = this.#span;
    if (span === undefined) {
      // Not sampled: no attempt span (it would not be recorded either); the upstream still learns the
      // trace, and that it is not sampled.
      return this.#carrier(this.#unrecordedSpanId!, false);
    }
    const child = new RecordedSpan(
      span.traceId,
      span.asParent(),
      attemptName(this.#instruments, this.#operation, attempt.number),
      SPAN_KIND_CLIENT,
      attemptPreset(this.#instruments, attempt.number),
    );
    if (this.#attemptSpan !== undefined) {
      this.#overlapping ??= new Map();
      this.#overlapping.set(this.#attemptNumber, this.#attemptSpan);
    }
    this.#attemptNumber = attempt.number;
    this.#attemptSpan = child;
    return this.#carrier(child.spanId, true);
  }

  onAttemptEnd(attempt: AttemptEnd): void {
    if (attempt.upstreamModel !== undefined) this.#responseModel = attempt.upstreamModel;
    let child: RecordedSpan | undefined;
    if (this.#attemptSpan !== undefined && this.#attemptNumber === attempt.number) {
      child = this.#attemptSpan;
      this.#attemptSpan = undefined;
    } else {
      child = this.#overlapping?.get(attempt.number);
      this.#overlapping?.delete(attempt.number);
    }
    if (child === undefined) return;
    const extended = child.preset?.extended(ATTEMPT_END_KEYS, attempt.upstreamModel, attempt.status);
    if (extended !== undefined) child.preset = extended;
    else {
      if (attempt.upstreamModel !== undefined)
        child.setAttribute('gen_ai.request.model', attempt.upstreamModel);
      if (attempt.status !== undefined) child.setAttribute('http.response.status_code', attempt.status);
    }
    if (attempt.error !== undefined) {
      child.setAttribute('error.type', attempt.error.code);
      child.setError(attempt.error.message);
    }
    this.#finish(child);
  }

  #finish(span: RecordedSpan): void {
    span.endMs = nowUnixMs();
    this.#instruments.spans!.batches.add(span);
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
    if (span === undefined) return;
    // The operation, provider, method and path are the span's preset attributes; only what the end
    // knows is added: what repeats from exchange to exchange as one shared set with them, when it can
    // be, the rest on the span.
    if (record.model !== undefined)
      span.name = exchangeName(this.#instruments, this.#operation, record.model);
    const reasons = stopReason === undefined ? undefined : sharedFinishReasons(stopReason);
    const extended =
      stopReason !== undefined && reasons === undefined
        ? undefined
        : span.preset?.extended(EXCHANGE_END_KEYS, record.model, this.#responseModel, record.status, reasons);
    const known = span.attributes;
    if (extended !== undefined) span.preset = extended;
    else {
      if (record.model !== undefined) known.push('gen_ai.request.model', record.model);
      if (this.#responseModel !== undefined) known.push('gen_ai.response.model', this.#responseModel);
      known.push('http.response.status_code', record.status);
      if (stopReason !== undefined) known.push('gen_ai.response.finish_reasons', reasons ?? [stopReason]);
    }
    known.push('tpx.request_id', record.requestId);
    if (input !== undefined) known.push('gen_ai.usage.input_tokens', input);
    if (output !== undefined) known.push('gen_ai.usage.output_tokens', output);
    if (record.error !== undefined) {
      known.push('error.type', record.error);
      span.setError(record.errorMessage ?? record.error);
    }
    // An attempt the transport never ended (it cannot happen, but a span left open is never exported).
    if (this.#attemptSpan !== undefined) this.#finish(this.#attemptSpan);
    for (const child of this.#overlapping?.values() ?? []) this.#finish(child);
    this.#finish(span);
  }
}

/** The resource's attributes in the form the span encoding takes (scalars and arrays of strings). */
function resourceEntries(attributes: Attributes): [string, SpanAttributeValue][] {
  const entries: [string, SpanAttributeValue][] = [];
  for (const [key, value] of Object.entries(attributes)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      entries.push([key, value]);
    } else if (Array.isArray(value) && value.every((item) => typeof item === 'string')) {
      entries.push([key, value]);
    }
  }
  return entries;
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
  // Each process exports its own cumulative GenAI histograms: every worker of `--workers`, every
  // replica. Told apart by nothing but their resource, their series would be one series with several
  // writers to a collector or backend, each export overwriting the others' counts. So each process names
  // itself (a random `service.instance.id`, as the semantic conventions suggest); one set in
  // `OTEL_RESOURCE_ATTRIBUTES` (a pod's name, say) wins over it.
  const resource = resources
    .resourceFromAttributes({ 'service.name': settings.serviceName, 'service.instance.id': randomUUID() })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const propagator = new W3CTraceContextPropagator();
  const closers: (() => Promise<void>)[] = [];

  let spans: Instruments['spans'];
  if (settings.traces !== undefined) {
    const { createOtlpSpanExporter } = await import('./otlp-span-exporter.js');
    const batches = new SpanBatches(
      settings.traces,
      createOtlpSpanExporter({
        url: settings.traces.url,
        protocol: settings.traces.protocol,
        origin: {
          resourceAttributes: resourceEntries(resource.attributes),
          scopeName: 'tpx-transport',
          scopeVersion: options.version,
        },
      }),
    );
    spans = { batches, sampler: settings.traces.sampler };
    closers.push(() => batches.shutdown());
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
    ...(spans === undefined ? {} : { spans }),
    ...(histograms === undefined ? {} : { histograms }),
    exchangePresets: new Map(),
    attemptPresets: [],
    attemptNames: new Map(),
    latestName: undefined,
  };

  function startExchange(start: ExchangeStart): ExchangeTelemetry {
    const operation = OPERATIONS.get(start.path);
    if (operation === undefined) return SKIPPED;
    return new TracedExchange(instruments, operation, start);
  }

  return {
    settings,
    ...(spans === undefined ? {} : { spanExportLosses: spans.batches }),
    startExchange,
    async shutdown() {
      await Promise.allSettled(closers.map((close) => close()));
    },
  };
}
