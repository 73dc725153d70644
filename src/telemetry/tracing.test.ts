import { describe, expect, it } from 'vitest';
import { isTransportError } from '../errors.js';
import { genAiProviderName, readOtelSettings, startTracing } from './tracing.js';

describe('readOtelSettings', () => {
  it('turns nothing on without an OTEL variable', () => {
    expect(readOtelSettings({})).toEqual({ serviceName: 'tpx-serve' });
  });

  it('turns both signals on for OTEL_EXPORTER_OTLP_ENDPOINT, with the signal paths appended', () => {
    const settings = readOtelSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' });
    expect(settings.traces).toEqual({
      url: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      sampler: { name: 'parentbased_always_on' },
      scheduleDelayMs: 5000,
      exportTimeoutMs: 30000,
      maxQueueSize: 2048,
      maxExportBatchSize: 512,
    });
    expect(settings.metrics).toEqual({
      url: 'http://collector:4318/v1/metrics',
      protocol: 'http/protobuf',
      exportIntervalMs: 60000,
    });
  });

  it('uses a signal endpoint as given and the default endpoint for an exporter named without one', () => {
    const settings = readOtelSettings({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces.example/custom',
      OTEL_METRICS_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json',
      OTEL_METRIC_EXPORT_INTERVAL: '5000',
    });
    expect(settings.traces?.url).toBe('http://traces.example/custom');
    expect(settings.metrics).toEqual({
      url: 'http://localhost:4318/v1/metrics',
      protocol: 'http/json',
      exportIntervalMs: 5000,
    });
  });

  it('keeps a signal off when its exporter is none, and everything off when the SDK is disabled', () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(readOtelSettings({ ...base, OTEL_METRICS_EXPORTER: 'none' }).metrics).toBeUndefined();
    expect(readOtelSettings({ ...base, OTEL_METRICS_EXPORTER: 'none' }).traces).toBeDefined();
    expect(readOtelSettings({ ...base, OTEL_SDK_DISABLED: 'true' })).toEqual({ serviceName: 'tpx-serve' });
  });

  it('batches spans as the OTEL_BSP_* variables say', () => {
    const settings = readOtelSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_BSP_SCHEDULE_DELAY: '250',
      OTEL_BSP_EXPORT_TIMEOUT: ' 1500 ',
      OTEL_BSP_MAX_QUEUE_SIZE: '4096',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '1024',
    });
    expect(settings.traces).toMatchObject({
      scheduleDelayMs: 250,
      exportTimeoutMs: 1500,
      maxQueueSize: 4096,
      maxExportBatchSize: 1024,
    });
  });

  it('ignores an OTEL_BSP_* value that is not a valid number, keeping the default', () => {
    const settings = readOtelSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_BSP_SCHEDULE_DELAY: '-1',
      OTEL_BSP_EXPORT_TIMEOUT: '0',
      OTEL_BSP_MAX_QUEUE_SIZE: '12.5',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: 'many',
    });
    expect(settings.traces).toMatchObject({
      scheduleDelayMs: 5000,
      exportTimeoutMs: 30000,
      maxQueueSize: 2048,
      maxExportBatchSize: 512,
    });
    const zeroDelay = readOtelSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_BSP_SCHEDULE_DELAY: '0',
    });
    expect(zeroDelay.traces?.scheduleDelayMs).toBe(0);
  });

  it('never makes a span batch larger than the queue', () => {
    const settings = readOtelSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_BSP_MAX_QUEUE_SIZE: '100',
    });
    expect(settings.traces).toMatchObject({ maxQueueSize: 100, maxExportBatchSize: 100 });
  });

  it('refuses gRPC with MODEL_ECONFIG naming the variable', () => {
    let caught: unknown;
    try {
      readOtelSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    } catch (error) {
      caught = error;
    }
    expect(isTransportError(caught) && caught.code).toBe('MODEL_ECONFIG');
    expect((caught as Error).message).toContain('OTEL_EXPORTER_OTLP_PROTOCOL');
  });
});

describe('startTracing', () => {
  it('starts nothing when no exporter is configured', async () => {
    expect(await startTracing({}, { providerName: 'anthropic' })).toBeUndefined();
  });
});

describe('genAiProviderName', () => {
  it('names providers as the GenAI conventions do, and self-hosted servers by their dialect', () => {
    expect(genAiProviderName('anthropic', undefined)).toBe('anthropic');
    expect(genAiProviderName('tpx', 'openai')).toBe('openai');
    expect(genAiProviderName('tpx', 'azure')).toBe('azure.ai.openai');
    expect(genAiProviderName('tpx', 'vllm')).toBe('vllm');
    expect(genAiProviderName('tpx', undefined)).toBe('openai-compatible');
  });
});
