/**
 * How `tpx serve` reads the standard `OTEL_*` variables (which signals to export, where, in which
 * protocol, how often, under which service name) and how it names each provider in the GenAI
 * conventions' `gen_ai.provider.name`.
 */
import { describe, expect, it } from 'vitest';
import { isTransportError, type TransportError } from '../../src/errors.js';
import { genAiProviderName, readOtelSettings } from '../../src/telemetry/tracing.js';

function refusal(env: Record<string, string>): TransportError {
  try {
    readOtelSettings(env);
  } catch (error) {
    if (isTransportError(error)) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('readOtelSettings: which signals', () => {
  it('turns on only the signal whose own endpoint is set, as given', () => {
    expect(readOtelSettings({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://m.example/in' })).toStrictEqual({
      serviceName: 'tpx-serve',
      metrics: { url: 'http://m.example/in', protocol: 'http/protobuf', exportIntervalMs: 60000 },
    });
  });

  it('prefers a signal’s own endpoint to the common one, and ignores an empty one', () => {
    const settings = readOtelSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://common:4318///',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:1/t',
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: '',
    });
    expect([settings.traces?.url, settings.metrics?.url]).toStrictEqual([
      'http://traces:1/t',
      'http://common:4318/v1/metrics',
    ]);
    expect(readOtelSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toStrictEqual({ serviceName: 'tpx-serve' });
  });

  it('turns a signal on for otlp among several exporters, in any case and spacing, and off for others', () => {
    const settings = readOtelSettings({
      OTEL_TRACES_EXPORTER: ' Console , OTLP ',
      OTEL_METRICS_EXPORTER: 'prometheus',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
    });
    expect(settings.metrics).toBeUndefined();
    expect([settings.traces?.url, settings.traces?.protocol]).toStrictEqual([
      'http://collector:4318/v1/traces',
      'http/protobuf',
    ]);
  });

  it('reads an empty exporter variable as unset, so the endpoint decides', () => {
    expect(
      readOtelSettings({ OTEL_TRACES_EXPORTER: '  ', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t/x' })
        .traces?.url,
    ).toBe('http://t/x');
    expect(readOtelSettings({ OTEL_TRACES_EXPORTER: '' })).toStrictEqual({ serviceName: 'tpx-serve' });
  });

  it('uses the default endpoint for an otlp exporter named without one', () => {
    expect(readOtelSettings({ OTEL_TRACES_EXPORTER: 'otlp' }).traces?.url).toBe(
      'http://localhost:4318/v1/traces',
    );
  });

  it('turns everything off when the SDK is disabled, whatever the case or spacing', () => {
    expect(
      readOtelSettings({
        OTEL_SDK_DISABLED: ' TRUE ',
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_SERVICE_NAME: 'edge-proxy',
      }),
    ).toStrictEqual({ serviceName: 'edge-proxy' });
    expect(
      readOtelSettings({ OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp' }).traces,
    ).toBeDefined();
  });
});

describe('readOtelSettings: service name, protocol and timing', () => {
  it('takes the service name from OTEL_SERVICE_NAME, tpx-serve when it is unset or empty', () => {
    expect(readOtelSettings({ OTEL_SERVICE_NAME: 'team-proxy' }).serviceName).toBe('team-proxy');
    expect(readOtelSettings({ OTEL_SERVICE_NAME: '' }).serviceName).toBe('tpx-serve');
  });

  it('takes a signal’s own protocol before the common one, trimmed', () => {
    const settings = readOtelSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c',
      OTEL_EXPORTER_OTLP_PROTOCOL: ' http/json ',
      OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/protobuf',
    });
    expect([settings.traces?.protocol, settings.metrics?.protocol]).toStrictEqual([
      'http/json',
      'http/protobuf',
    ]);
  });

  it('refuses gRPC naming the variable that asked for it, and only for a signal that is on', () => {
    const own = refusal({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' });
    expect([own.code, own.message]).toStrictEqual([
      'MODEL_ECONFIG',
      'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL is "grpc": tpx serve exports OTLP over HTTP only, as http/protobuf (the default) or http/json',
    ]);
    const common = refusal({ OTEL_METRICS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    expect(common.message).toBe(
      'OTEL_EXPORTER_OTLP_PROTOCOL is "grpc": tpx serve exports OTLP over HTTP only, as http/protobuf (the default) or http/json',
    );
    expect(readOtelSettings({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toStrictEqual({
      serviceName: 'tpx-serve',
    });
  });

  it('takes the span batch delay from OTEL_BSP_SCHEDULE_DELAY when it is a number ≥ 0, else 5000 ms', () => {
    const delay = (value: string) =>
      readOtelSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_BSP_SCHEDULE_DELAY: value }).traces
        ?.scheduleDelayMs;
    expect([delay('0'), delay('250'), delay('-1'), delay('soon'), delay('Infinity')]).toStrictEqual([
      0, 250, 5000, 5000, 5000,
    ]);
  });

  it('takes the metric export interval from OTEL_METRIC_EXPORT_INTERVAL when it is a number > 0, else 60000 ms', () => {
    const interval = (value: string) =>
      readOtelSettings({ OTEL_METRICS_EXPORTER: 'otlp', OTEL_METRIC_EXPORT_INTERVAL: value }).metrics
        ?.exportIntervalMs;
    expect([
      interval('1000'),
      interval('0'),
      interval('-5'),
      interval('often'),
      interval('Infinity'),
    ]).toStrictEqual([1000, 60000, 60000, 60000, 60000]);
  });
});

describe('genAiProviderName', () => {
  it('names each known dialect as the GenAI conventions do', () => {
    expect(
      ['openai', 'azure', 'vertex', 'gemini', 'mistral', 'deepseek', 'groq'].map((dialect) =>
        genAiProviderName('tpx', dialect),
      ),
    ).toStrictEqual([
      'openai',
      'azure.ai.openai',
      'gcp.vertex_ai',
      'gcp.gemini',
      'mistral_ai',
      'deepseek',
      'groq',
    ]);
  });

  it('names a self-hosted server by its dialect, an unknown one openai-compatible, and anthropic as itself', () => {
    expect(genAiProviderName('tpx', 'llamacpp')).toBe('llamacpp');
    expect(genAiProviderName('tpx', undefined)).toBe('openai-compatible');
    expect(genAiProviderName('anthropic', undefined)).toBe('anthropic');
    expect(genAiProviderName('anthropic', 'openai')).toBe('anthropic');
    expect(genAiProviderName('none', undefined)).toBe('none');
  });
});
