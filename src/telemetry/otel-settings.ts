/**
 * What the standard `OTEL_*` variables ask of `tpx serve`, read from the environment object the CLI was
 * given (the OpenTelemetry SDK's own readers look at `process.env` only, and `tpx serve` is also run
 * in-process with an environment of its own): which signals to export, where, in which protocol, which
 * sampler, how spans are batched. A pure function, so a configuration the process cannot honour is
 * refused at start-up with `MODEL_ECONFIG` instead of being logged and ignored by the SDK.
 *
 * | variables | traces | metrics |
 * |-----------|--------|---------|
 * | `OTEL_SDK_DISABLED=true` | off | off |
 * | `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` = `none` (or anything but `otlp`) | off | off |
 * | `…_EXPORTER=otlp` | on | on |
 * | `OTEL_EXPORTER_OTLP_ENDPOINT`, or the signal's own `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `…_METRICS_ENDPOINT` | on | on |
 * | none of these | off | off |
 *
 * What is not read here (headers, timeout, compression, certificates, temporality, resource attributes)
 * the SDK's exporters and resource detector read from the process environment themselves.
 *
 * @module
 */
import { TransportError } from '../errors.js';

/** Default OTLP/HTTP endpoint (the OpenTelemetry specification's). */
const DEFAULT_ENDPOINT = 'http://localhost:4318';
const DEFAULT_SERVICE_NAME = 'tpx-serve';
const DEFAULT_METRIC_EXPORT_INTERVAL_MS = 60_000;

/** The samplers of the specification's `OTEL_TRACES_SAMPLER` that a process can apply on its own. */
export const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/** `OTEL_TRACES_SAMPLER` and, for the two ratio samplers, `OTEL_TRACES_SAMPLER_ARG` (0 to 1). */
export interface SamplerSettings {
  name: (typeof SAMPLERS)[number];
  ratio?: number;
}

/** How spans are batched for export (`OTEL_BSP_*`), as the SDK's `BatchSpanProcessor` takes them. */
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

/** The specification's defaults for the span batches. */
const BATCH_DEFAULTS: SpanBatchSettings = {
  scheduleDelayMs: 5_000,
  exportTimeoutMs: 30_000,
  maxQueueSize: 2048,
  maxExportBatchSize: 512,
};

/** The two OTLP encodings over HTTP. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** What the environment asks for, one signal at a time. */
export interface OtelSettings {
  traces?: { url: string; protocol: OtlpProtocol; sampler: SamplerSettings } & SpanBatchSettings;
  metrics?: { url: string; protocol: OtlpProtocol; exportIntervalMs: number };
  serviceName: string;
}

type Env = Record<string, string | undefined>;

function readProtocol(env: Env, signal: 'TRACES' | 'METRICS'): OtlpProtocol {
  const name = `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`;
  const value = (env[name] ?? env['OTEL_EXPORTER_OTLP_PROTOCOL'] ?? 'http/protobuf').trim();
  if (value === 'http/protobuf' || value === 'http/json') return value;
  throw new TransportError(
    'MODEL_ECONFIG',
    `${env[name] === undefined ? 'OTEL_EXPORTER_OTLP_PROTOCOL' : name} is ${JSON.stringify(value)}: tpx serve exports OTLP over HTTP only, as http/protobuf (the default) or http/json`,
  );
}

function signalUrl(env: Env, signal: 'TRACES' | 'METRICS', path: string): string | undefined {
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
function readNumber(env: Env, name: string, fallback: number, isValid: (value: number) => boolean): number {
  const text = env[name]?.trim();
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  return Number.isFinite(value) && isValid(value) ? value : fallback;
}

function readSpanBatchSettings(env: Env): SpanBatchSettings {
  const isCount = (value: number) => Number.isInteger(value) && value > 0;
  const maxQueueSize = readNumber(env, 'OTEL_BSP_MAX_QUEUE_SIZE', BATCH_DEFAULTS.maxQueueSize, isCount);
  const maxBatch = readNumber(
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
      (v) => v >= 0,
    ),
    exportTimeoutMs: readNumber(env, 'OTEL_BSP_EXPORT_TIMEOUT', BATCH_DEFAULTS.exportTimeoutMs, (v) => v > 0),
    maxQueueSize,
    // The specification: a batch larger than the queue is the queue.
    maxExportBatchSize: Math.min(maxBatch, maxQueueSize),
  };
}

function readSampler(env: Env): SamplerSettings {
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

/** Whether `signal` is exported, and where to: its URL, or `undefined` when it is off. */
function signalTarget(env: Env, signal: 'TRACES' | 'METRICS', path: string): string | undefined {
  const exporter = env[`OTEL_${signal}_EXPORTER`]?.trim().toLowerCase();
  const url = signalUrl(env, signal, path);
  const exporters = exporter === undefined || exporter === '' ? [] : exporter.split(',').map((x) => x.trim());
  const isOn = exporters.length > 0 ? exporters.includes('otlp') : url !== undefined;
  return isOn ? (url ?? `${DEFAULT_ENDPOINT}/${path}`) : undefined;
}

/**
 * Reads the `OTEL_*` variables: which signals to export, where and how. A pure function of `env`.
 *
 * @throws TransportError `MODEL_ECONFIG` for a protocol other than OTLP over HTTP, or a sampler this
 * process cannot apply on its own (`jaeger_remote`, `xray`, …).
 */
export function readOtelSettings(env: Env): OtelSettings {
  const settings: OtelSettings = { serviceName: env['OTEL_SERVICE_NAME'] || DEFAULT_SERVICE_NAME };
  if ((env['OTEL_SDK_DISABLED'] ?? '').trim().toLowerCase() === 'true') return settings;
  const tracesUrl = signalTarget(env, 'TRACES', 'v1/traces');
  if (tracesUrl !== undefined) {
    settings.traces = {
      url: tracesUrl,
      protocol: readProtocol(env, 'TRACES'),
      sampler: readSampler(env),
      ...readSpanBatchSettings(env),
    };
  }
  const metricsUrl = signalTarget(env, 'METRICS', 'v1/metrics');
  if (metricsUrl !== undefined) {
    settings.metrics = {
      url: metricsUrl,
      protocol: readProtocol(env, 'METRICS'),
      exportIntervalMs: readNumber(
        env,
        'OTEL_METRIC_EXPORT_INTERVAL',
        DEFAULT_METRIC_EXPORT_INTERVAL_MS,
        (value) => value > 0,
      ),
    };
  }
  return settings;
}
