/**
 * Installs the OpenTelemetry SDK in a `tpx serve` process when the standard `OTEL_*` variables configure
 * an exporter (`otel-settings.ts`), and only then: every SDK and exporter package is loaded here with
 * `import()`, so a process without `OTEL_*` loads none of them.
 *
 * - Traces: `@opentelemetry/sdk-trace-base`'s `BasicTracerProvider` with a `BatchSpanProcessor`
 *   (`OTEL_BSP_*`), the sampler `OTEL_TRACES_SAMPLER` names (`ParentBased`, `TraceIdRatioBased`,
 *   `AlwaysOn`, `AlwaysOff`), and the OTLP/HTTP trace exporter of the protocol asked
 *   (`exporter-trace-otlp-proto` or `-http`), registered as the global tracer provider with the W3C
 *   trace-context propagator.
 * - Metrics: `@opentelemetry/sdk-metrics`' `MeterProvider` with a periodic reader
 *   (`OTEL_METRIC_EXPORT_INTERVAL`) and the OTLP/HTTP metric exporter, registered as the global meter
 *   provider; it carries the GenAI histograms.
 *
 * The exporters read headers, timeout, compression, certificates and temporality from the process's
 * `OTEL_EXPORTER_OTLP_*` variables, as they do in any application. The spans and histograms themselves
 * are made through the API (`genai-telemetry.ts`), which is what the returned {@link Tracing} runs.
 *
 * @module
 */
import {
  metrics,
  propagation,
  ProxyTracerProvider,
  trace,
  type MeterProvider,
  type TracerProvider,
} from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { Sampler } from '@opentelemetry/sdk-trace-base';
import { TransportError } from '../errors.js';
import type { Telemetry } from './exchange-telemetry.js';
import { createGenAiTelemetry, type GenAiTelemetryOptions } from './genai-telemetry.js';
import { readOtelSettings, type OtelSettings, type SamplerSettings } from './otel-settings.js';
import { serviceResource } from './service-resource.js';
import type { SpanExportLosses } from './span-export-losses.js';

export { genAiProviderName } from './genai-telemetry.js';
export { readOtelSettings, type OtelSettings } from './otel-settings.js';
export type { SpanExportLosses } from './span-export-losses.js';

/** The installed SDK: per-exchange telemetry through it, and a shutdown that flushes what is buffered. */
export interface Tracing extends Telemetry {
  readonly settings: OtelSettings;
  /** What the span export has lost so far; absent when traces are off (metrics only). */
  readonly spanExportLosses?: SpanExportLosses;
  /** Exports what is still buffered, stops, and unregisters the SDK. Idempotent. */
  shutdown(): Promise<void>;
}

/** Options of {@link startTracing}: the GenAI telemetry's. */
export type TracingOptions = GenAiTelemetryOptions;

const loadTraceSdk = () => import('@opentelemetry/sdk-trace-base');
type TraceSdk = Awaited<ReturnType<typeof loadTraceSdk>>;

/** The SDK's sampler for `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG`. */
function samplerOf(sdk: TraceSdk, settings: SamplerSettings): Sampler {
  const ratio = () => new sdk.TraceIdRatioBasedSampler(settings.ratio ?? 1);
  switch (settings.name) {
    case 'always_on':
      return new sdk.AlwaysOnSampler();
    case 'always_off':
      return new sdk.AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_on':
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new sdk.ParentBasedSampler({ root: ratio() });
  }
}

/**
 * The providers this module registered last. A later start replaces them while they are still the
 * globals (a process runs one `tpx serve` at a time; in-process tests start several), and a shutdown
 * unregisters its own only: never what a later start, or anyone else, registered.
 */
const lastRegistered: { tracerProvider?: TracerProvider; meterProvider?: MeterProvider } = {};

/** Whether `provider` is the global tracer provider (the API's proxy delegates to it). */
function isGlobalTracerProvider(provider: TracerProvider | undefined): boolean {
  const global = trace.getTracerProvider();
  return provider !== undefined && global instanceof ProxyTracerProvider && global.getDelegate() === provider;
}

/** Whether `provider` is the global meter provider. */
function isGlobalMeterProvider(provider: MeterProvider | undefined): boolean {
  return provider !== undefined && metrics.getMeterProvider() === provider;
}

/** A registration that failed: something else in this process holds the global already. */
function alreadyRegistered(what: string): TransportError {
  return new TransportError(
    'MODEL_ECONFIG',
    `another OpenTelemetry ${what} is registered in this process: tpx serve installs its own from OTEL_*`,
  );
}

/** Starts the traces pipeline and registers it; resolves to its losses and its shutdown. */
async function startTraces(
  settings: NonNullable<OtelSettings['traces']>,
  resource: Resource,
): Promise<{ losses: SpanExportLosses; shutdown: () => Promise<void> }> {
  const [sdk, core, { SpanExportLossCounter }, { OTLPTraceExporter }] = await Promise.all([
    loadTraceSdk(),
    import('@opentelemetry/core'),
    import('./span-export-losses.js'),
    settings.protocol === 'http/json'
      ? import('@opentelemetry/exporter-trace-otlp-http')
      : import('@opentelemetry/exporter-trace-otlp-proto'),
  ]);
  const losses = new SpanExportLossCounter();
  // The shim of sdk-trace-base hands its options on to the processor whole, `selfObsMeterProvider`
  // included (its own type lists only the batch settings).
  const processorOptions = {
    maxExportBatchSize: settings.maxExportBatchSize,
    maxQueueSize: settings.maxQueueSize,
    scheduledDelayMillis: settings.scheduleDelayMs,
    exportTimeoutMillis: settings.exportTimeoutMs,
    selfObsMeterProvider: losses,
  };
  const exporter = losses.countFailures(new OTLPTraceExporter({ url: settings.url }));
  const provider = new sdk.BasicTracerProvider({
    resource,
    sampler: samplerOf(sdk, settings.sampler),
    spanProcessors: [new sdk.BatchSpanProcessor(exporter, processorOptions)],
  });
  if (isGlobalTracerProvider(lastRegistered.tracerProvider)) {
    trace.disable();
    propagation.disable();
  }
  if (!trace.setGlobalTracerProvider(provider)) {
    await provider.shutdown();
    throw alreadyRegistered('tracer provider');
  }
  lastRegistered.tracerProvider = provider;
  propagation.setGlobalPropagator(new core.W3CTraceContextPropagator());
  return {
    losses,
    shutdown: async () => {
      if (isGlobalTracerProvider(provider)) {
        trace.disable();
        propagation.disable();
      }
      await provider.shutdown();
    },
  };
}

/** Starts the metrics pipeline and registers it; resolves to its shutdown. */
async function startMetrics(
  settings: NonNullable<OtelSettings['metrics']>,
  resource: Resource,
): Promise<() => Promise<void>> {
  const [sdk, { OTLPMetricExporter }] = await Promise.all([
    import('@opentelemetry/sdk-metrics'),
    settings.protocol === 'http/json'
      ? import('@opentelemetry/exporter-metrics-otlp-http')
      : import('@opentelemetry/exporter-metrics-otlp-proto'),
  ]);
  const provider = new sdk.MeterProvider({
    resource,
    readers: [
      new sdk.PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: settings.url }),
        exportIntervalMillis: settings.exportIntervalMs,
      }),
    ],
  });
  if (isGlobalMeterProvider(lastRegistered.meterProvider)) metrics.disable();
  if (!metrics.setGlobalMeterProvider(provider)) {
    await provider.shutdown();
    throw alreadyRegistered('meter provider');
  }
  lastRegistered.meterProvider = provider;
  return async () => {
    if (isGlobalMeterProvider(provider)) metrics.disable();
    await provider.shutdown();
  };
}

/**
 * Installs the SDK as the `OTEL_*` variables in `env` say, or resolves to `undefined` when they
 * configure no exporter.
 *
 * @throws TransportError `MODEL_ECONFIG` for an unsupported protocol or sampler, or when another SDK is
 * registered in the process already.
 */
export async function startTracing(
  env: Record<string, string | undefined>,
  options: TracingOptions,
): Promise<Tracing | undefined> {
  const settings = readOtelSettings(env);
  if (settings.traces === undefined && settings.metrics === undefined) return undefined;
  const resource = await serviceResource(settings.serviceName);
  const closers: (() => Promise<void>)[] = [];
  let spanExportLosses: SpanExportLosses | undefined;
  try {
    if (settings.traces !== undefined) {
      const traces = await startTraces(settings.traces, resource);
      spanExportLosses = traces.losses;
      closers.push(traces.shutdown);
    }
    if (settings.metrics !== undefined) closers.push(await startMetrics(settings.metrics, resource));
  } catch (error) {
    await Promise.allSettled(closers.map((close) => close()));
    throw error;
  }
  // Made once the providers are registered: the meter is taken from the global provider now.
  const telemetry = createGenAiTelemetry(options);
  let stopped: Promise<void> | undefined;
  return {
    settings,
    ...(spanExportLosses === undefined ? {} : { spanExportLosses }),
    startExchange: (start) => telemetry.startExchange(start),
    shutdown() {
      stopped ??= Promise.allSettled(closers.map((close) => close())).then(() => undefined);
      return stopped;
    },
  };
}
