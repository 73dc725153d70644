/**
 * The spans of one exchange as `startTracing` makes them, driven through its public telemetry interface
 * (start, attempts, end) and read back from a real OTLP/HTTP receiver on loopback: attempts that overlap
 * each get their own span with their own outcome, an attempt never ended is still exported, the exchange
 * span carries exactly what its end knew, and routes that are not model exchanges make no span.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TransportError } from '../../src/errors.js';
import type { ExchangeTelemetry } from '../../src/telemetry/exchange-telemetry.js';
import { readOtelSettings, startTracing, type Tracing } from '../../src/telemetry/tracing.js';
import {
  attributes,
  histogramPoints,
  spansOf,
  startReceiver,
  type OtlpValue,
  type Receiver,
} from '../helpers/otlp-receiver.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function traced(
  protocol: 'http/json' | 'http/protobuf' = 'http/json',
): Promise<{ tracing: Tracing; receiver: Receiver }> {
  const receiver = await startReceiver();
  closers.push(() => receiver.close());
  const tracing = await startTracing(
    {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: protocol,
    },
    { providerName: 'anthropic', version: '0.0.0-test' },
  );
  if (tracing === undefined) throw new Error('expected tracing to start');
  closers.push(() => tracing.shutdown());
  return { tracing, receiver };
}

const START = { method: 'POST', path: '/v1/messages', headers: {} };

/** Many exchanges that each end with a model of their own (more than a cache of shared ends would hold). */
const MAX_EXTENSIONS = 256;

/** Ends a `chat` exchange that answered 200 for `model`, stopping for `stopReason`. */
function endChat(exchange: ExchangeTelemetry, requestId: string, model: string, stopReason: string): void {
  exchange.end({
    record: {
      requestId,
      method: 'POST',
      path: '/v1/messages',
      provider: 'anthropic',
      status: 200,
      durationMs: 2,
      model,
    },
    stopReason,
  });
}

describe('attempt spans', () => {
  it('give attempts that overlap a span each, each with its own outcome, under the exchange span', async () => {
    const { tracing, receiver } = await traced();
    const exchange = tracing.startExchange(START);
    const observer = exchange.observer!;
    const first = observer.onAttemptStart?.({ number: 1, provider: 'anthropic' });
    const second = observer.onAttemptStart?.({ number: 2, provider: 'anthropic' });
    expect(first?.['traceparent']).not.toBe(second?.['traceparent']);
    observer.onAttemptEnd?.({
      number: 1,
      provider: 'anthropic',
      status: 529,
      error: new TransportError('MODEL_EHTTP', 'overloaded', { status: 529 }),
      durationMs: 5,
    });
    observer.onAttemptEnd?.({
      number: 2,
      provider: 'anthropic',
      status: 200,
      upstreamModel: 'up-model',
      durationMs: 5,
    });
    // An end for an attempt that never started changes nothing.
    observer.onAttemptEnd?.({ number: 9, provider: 'anthropic', status: 500, durationMs: 1 });
    exchange.end({
      record: {
        requestId: 'req_1',
        method: 'POST',
        path: '/v1/messages',
        provider: 'anthropic',
        status: 200,
        durationMs: 10,
      },
    });
    await tracing.shutdown();
    const spans = spansOf(receiver);
    const scopes = receiver.exports
      .filter((entry) => entry.path === '/v1/traces')
      .flatMap((entry) =>
        (
          JSON.parse(entry.body.toString('utf8')) as {
            resourceSpans: { scopeSpans: { scope: { name: string; version?: string } }[] }[];
          }
        ).resourceSpans.flatMap((resource) => resource.scopeSpans.map((scope) => scope.scope)),
      );
    expect(scopes[0]).toMatchObject({ name: 'tpx-transport', version: '0.0.0-test' });
    expect(spans.map((span) => span.name).sort()).toStrictEqual(['chat', 'chat attempt 1', 'chat attempt 2']);
    const parent = spans.find((span) => span.name === 'chat')!;
    const byName = (name: string) => spans.find((span) => span.name === name)!;
    expect(byName('chat attempt 1').parentSpanId).toBe(parent.spanId);
    expect(byName('chat attempt 2').parentSpanId).toBe(parent.spanId);
    expect(attributes(byName('chat attempt 1'))).toStrictEqual({
      'gen_ai.provider.name': 'anthropic',
      'tpx.attempt': 1,
      'http.response.status_code': 529,
      'error.type': 'MODEL_EHTTP',
    });
    expect(byName('chat attempt 1').status?.code).toBe(2);
    expect(attributes(byName('chat attempt 2'))).toStrictEqual({
      'gen_ai.provider.name': 'anthropic',
      'tpx.attempt': 2,
      'gen_ai.request.model': 'up-model',
      'http.response.status_code': 200,
    });
    // The exchange span: what it started with, and of its end only what that end knew.
    expect(attributes(parent)).toStrictEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'http.request.method': 'POST',
      'url.path': '/v1/messages',
      'gen_ai.response.model': 'up-model',
      'http.response.status_code': 200,
      'tpx.request_id': 'req_1',
    });
    expect(parent.status?.code ?? 0).toBe(0);
  });

  it('export an attempt the transport never ended, and an overlapped one, when the exchange ends', async () => {
    const { tracing, receiver } = await traced();
    const exchange = tracing.startExchange(START);
    exchange.observer!.onAttemptStart?.({ number: 1, provider: 'anthropic' });
    exchange.observer!.onAttemptStart?.({ number: 2, provider: 'anthropic' });
    exchange.end({
      record: {
        requestId: 'req_2',
        method: 'POST',
        path: '/v1/messages',
        provider: 'anthropic',
        status: 499,
        durationMs: 3,
      },
    });
    await tracing.shutdown();
    expect(
      spansOf(receiver)
        .map((span) => span.name)
        .sort(),
    ).toStrictEqual(['chat', 'chat attempt 1', 'chat attempt 2']);
  });
});

describe('the span export', () => {
  it('goes out with the OTEL_EXPORTER_OTLP_* headers and compression the process sets, as protobuf', async () => {
    vi.stubEnv('OTEL_EXPORTER_OTLP_TRACES_HEADERS', 'x-collector-key=k-123,x-tenant=team%20a');
    vi.stubEnv('OTEL_EXPORTER_OTLP_TRACES_COMPRESSION', 'gzip');
    const receiver = await startReceiver();
    closers.push(() => receiver.close());
    const tracing = (await startTracing(
      {
        OTEL_METRICS_EXPORTER: 'none',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
      },
      { providerName: 'anthropic' },
    ))!;
    const exchange = tracing.startExchange(START);
    exchange.end({
      record: {
        requestId: 'req_h',
        method: 'POST',
        path: '/v1/messages',
        provider: 'anthropic',
        status: 200,
        durationMs: 1,
      },
    });
    await tracing.shutdown();
    vi.unstubAllEnvs();
    const [sent] = receiver.exports;
    expect(sent?.headers).toMatchObject({
      'x-collector-key': 'k-123',
      'x-tenant': 'team a',
      'content-encoding': 'gzip',
      'content-type': 'application/x-protobuf',
    });
    expect(spansOf(receiver).map((span) => attributes(span)['tpx.request_id'])).toStrictEqual(['req_h']);
  });
});

describe('the exchange span', () => {
  it('carries exactly what the end knew: model, usage, stop reason, status, request id and the error', async () => {
    const { tracing, receiver } = await traced();
    const exchange = tracing.startExchange({ ...START, path: '/v1/messages/count_tokens' });
    exchange.end({
      record: {
        requestId: 'req_3',
        method: 'POST',
        path: '/v1/messages/count_tokens',
        provider: 'anthropic',
        status: 504,
        durationMs: 3,
        model: 'claude-x',
        usage: { input_tokens: 7, output_tokens: 0 },
        error: 'MODEL_ETIMEOUT',
        errorMessage: 'too slow',
      },
      stopReason: 'max_tokens',
    });
    await tracing.shutdown();
    const [span] = spansOf(receiver);
    expect(span?.name).toBe('count_tokens claude-x');
    expect(attributes(span!)).toStrictEqual({
      'gen_ai.operation.name': 'count_tokens',
      'gen_ai.provider.name': 'anthropic',
      'http.request.method': 'POST',
      'url.path': '/v1/messages/count_tokens',
      'gen_ai.request.model': 'claude-x',
      'http.response.status_code': 504,
      'tpx.request_id': 'req_3',
      'gen_ai.usage.input_tokens': 7,
      'gen_ai.usage.output_tokens': 0,
      'gen_ai.response.finish_reasons': ['max_tokens'],
      'error.type': 'MODEL_ETIMEOUT',
    });
    expect(span?.status).toMatchObject({ code: 2, message: 'too slow' });
  });

  it.each(['http/json', 'http/protobuf'] as const)(
    'of consecutive exchanges each has its own model, attempts and stop reason in its name and attributes (%s)',
    async (protocol) => {
      const { tracing, receiver } = await traced(protocol);
      const plan = [
        { model: 'model-a', stopReason: 'end_turn', attempts: 1 },
        { model: 'model-b', stopReason: 'max_tokens', attempts: 2 },
        { model: 'model-a', stopReason: 'end_turn', attempts: 1 },
        { model: 'model-a', stopReason: 'tool_use', attempts: 3 },
      ];
      for (const [index, step] of plan.entries()) {
        const exchange = tracing.startExchange(START);
        for (let number = 1; number <= step.attempts; number++) {
          exchange.observer?.onAttemptStart?.({ number, provider: 'anthropic' });
          exchange.observer?.onAttemptEnd?.({ number, provider: 'anthropic', status: 200, durationMs: 1 });
        }
        endChat(exchange, `req_${index}`, step.model, step.stopReason);
      }
      await tracing.shutdown();
      const spans = spansOf(receiver);
      const exchanges = spans.filter((span) => !span.name.includes(' attempt '));
      expect(
        exchanges.map((span) => {
          const found = attributes(span);
          return [span.name, found['tpx.request_id'], found['gen_ai.response.finish_reasons']];
        }),
      ).toStrictEqual(plan.map((step, index) => [`chat ${step.model}`, `req_${index}`, [step.stopReason]]));
      expect(spans.filter((span) => span.name.includes(' attempt ')).map((span) => span.name)).toStrictEqual(
        plan.flatMap((step) => Array.from({ length: step.attempts }, (_, at) => `chat attempt ${at + 1}`)),
      );
    },
  );

  it(`carries its model and status past ${MAX_EXTENSIONS} distinct ends, when they are no longer shared`, async () => {
    const { tracing, receiver } = await traced('http/protobuf');
    const count = MAX_EXTENSIONS + 4;
    for (let index = 0; index < count; index++) {
      const exchange = tracing.startExchange(START);
      endChat(exchange, `req_${index}`, `model-${index}`, 'end_turn');
    }
    await tracing.shutdown();
    const spans = spansOf(receiver);
    expect(spans).toHaveLength(count);
    for (const [index, span] of spans.entries()) {
      expect(attributes(span)).toStrictEqual({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'http.request.method': 'POST',
        'url.path': '/v1/messages',
        'gen_ai.request.model': `model-${index}`,
        'http.response.status_code': 200,
        'tpx.request_id': `req_${index}`,
        'gen_ai.response.finish_reasons': ['end_turn'],
      });
    }
  });

  it('is not made for a route that is not a model exchange', async () => {
    const { tracing, receiver } = await traced();
    const health = tracing.startExchange({ ...START, method: 'GET', path: '/healthz' });
    expect(health.observer).toBeUndefined();
    health.end({
      record: {
        requestId: 'r',
        method: 'GET',
        path: '/healthz',
        provider: 'anthropic',
        status: 200,
        durationMs: 1,
      },
    });
    const models = tracing.startExchange({ ...START, method: 'GET', path: '/v1/models' });
    models.end({
      record: {
        requestId: 'm',
        method: 'GET',
        path: '/v1/models',
        provider: 'anthropic',
        status: 200,
        durationMs: 1,
      },
    });
    await tracing.shutdown();
    expect(spansOf(receiver).map((span) => span.name)).toStrictEqual(['list_models']);
  });
});

describe('the resource', () => {
  it('names the service and adds what OTEL_RESOURCE_ATTRIBUTES says', async () => {
    vi.stubEnv('OTEL_RESOURCE_ATTRIBUTES', 'deployment.environment.name=test');
    try {
      const receiver = await startReceiver();
      closers.push(() => receiver.close());
      const tracing = await startTracing(
        {
          OTEL_SERVICE_NAME: 'proxy-7',
          OTEL_TRACES_EXPORTER: 'otlp',
          OTEL_METRICS_EXPORTER: 'none',
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
          OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        },
        { providerName: 'anthropic' },
      );
      if (tracing === undefined) throw new Error('expected tracing to start');
      closers.push(() => tracing.shutdown());
      tracing.startExchange(START).end({
        record: {
          requestId: 'r',
          method: 'POST',
          path: '/v1/messages',
          provider: 'anthropic',
          status: 200,
          durationMs: 1,
        },
      });
      await tracing.shutdown();
      const body = JSON.parse(
        receiver.exports.find((entry) => entry.path === '/v1/traces')!.body.toString('utf8'),
      ) as {
        resourceSpans: { resource: { attributes: { key: string; value: OtlpValue }[] } }[];
      };
      expect(attributes(body.resourceSpans[0]!.resource)).toMatchObject({
        'service.name': 'proxy-7',
        'deployment.environment.name': 'test',
      });
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe('the GenAI histograms', () => {
  /** The data points of histogram `name`, each as its attributes, count and sum, in a stable order. */
  function points(receiver: Receiver, name: string) {
    return histogramPoints(receiver, name)
      .map(({ count, sum, ...keys }) => ({ attributes: keys, count, sum }))
      .sort((a, b) => JSON.stringify(a.attributes).localeCompare(JSON.stringify(b.attributes)));
  }

  it('record each exchange with only the attributes it knows, its duration in seconds, and only token counts that are counts', async () => {
    const receiver = await startReceiver();
    closers.push(() => receiver.close());
    const tracing = await startTracing(
      {
        OTEL_METRICS_EXPORTER: 'otlp',
        OTEL_TRACES_EXPORTER: 'none',
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${receiver.url}/v1/metrics`,
        OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json',
      },
      { providerName: 'anthropic', version: '0.0.0-test' },
    );
    if (tracing === undefined) throw new Error('expected metrics to start');
    closers.push(() => tracing.shutdown());
    const before = performance.now();
    const list = tracing.startExchange({ method: 'GET', path: '/v1/models', headers: {} });
    list.end({
      record: {
        requestId: 'a',
        method: 'GET',
        path: '/v1/models',
        provider: 'anthropic',
        status: 200,
        durationMs: 1,
      },
    });
    const chat = tracing.startExchange(START);
    // Without traces there is no attempt span and no trace context to send upstream; the upstream
    // model an attempt reports still names the response model.
    expect(chat.observer?.onAttemptStart?.({ number: 1, provider: 'anthropic' })).toBeUndefined();
    chat.observer?.onAttemptEnd?.({
      number: 1,
      provider: 'anthropic',
      status: 200,
      upstreamModel: 'up',
      durationMs: 1,
    });
    chat.end({
      record: {
        requestId: 'b',
        method: 'POST',
        path: '/v1/messages',
        provider: 'anthropic',
        status: 200,
        durationMs: 1,
        model: 'claude-x',
        usage: { input_tokens: 0, output_tokens: 0 },
      },
    });
    // Counts that are no counts (a JSON 1e999 reads as Infinity) are not recorded.
    const odd = tracing.startExchange(START);
    odd.end({
      record: {
        requestId: 'c',
        method: 'POST',
        path: '/v1/messages',
        provider: 'anthropic',
        status: 200,
        durationMs: 1,
        model: 'claude-odd',
        usage: { input_tokens: Number.POSITIVE_INFINITY, output_tokens: Number.NaN },
      },
    });
    const elapsedSeconds = (performance.now() - before) / 1000;
    await tracing.shutdown();
    const durations = points(receiver, 'gen_ai.client.operation.duration');
    expect(durations.map(({ attributes: keys, count }) => ({ attributes: keys, count }))).toStrictEqual([
      {
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'anthropic',
          'gen_ai.request.model': 'claude-odd',
        },
        count: 1,
      },
      {
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'anthropic',
          'gen_ai.request.model': 'claude-x',
          'gen_ai.response.model': 'up',
        },
        count: 1,
      },
      {
        attributes: { 'gen_ai.operation.name': 'list_models', 'gen_ai.provider.name': 'anthropic' },
        count: 1,
      },
    ]);
    for (const { sum } of durations) {
      expect(sum).toBeGreaterThanOrEqual(0);
      expect(sum).toBeLessThanOrEqual(elapsedSeconds);
    }
    const exported = receiver.exports
      .filter((entry) => entry.path === '/v1/metrics')
      .flatMap(
        (entry) =>
          (
            JSON.parse(entry.body.toString('utf8')) as {
              resourceMetrics: {
                scopeMetrics: {
                  scope: { name: string; version?: string };
                  metrics: {
                    name: string;
                    description: string;
                    unit: string;
                    histogram: { dataPoints: { explicitBounds: number[] }[] };
                  }[];
                }[];
              }[];
            }
          ).resourceMetrics,
      )
      .flatMap((resource) => resource.scopeMetrics);
    expect(exported[0]?.scope).toMatchObject({ name: 'tpx-transport', version: '0.0.0-test' });
    const described = exported
      .flatMap((scope) => scope.metrics)
      .map((metric) => ({
        name: metric.name,
        description: metric.description,
        unit: metric.unit,
        bounds: metric.histogram.dataPoints[0]?.explicitBounds,
      }));
    expect(described).toStrictEqual([
      {
        name: 'gen_ai.client.token.usage',
        description: 'Number of input and output tokens used.',
        unit: '{token}',
        bounds: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
      },
      {
        name: 'gen_ai.client.operation.duration',
        description: 'GenAI operation duration.',
        unit: 's',
        bounds: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
      },
    ]);
    const tokenAttributes = (type: string) => ({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-x',
      'gen_ai.response.model': 'up',
      'gen_ai.token.type': type,
    });
    expect(points(receiver, 'gen_ai.client.token.usage')).toStrictEqual([
      { attributes: tokenAttributes('input'), count: 1, sum: 0 },
      { attributes: tokenAttributes('output'), count: 1, sum: 0 },
    ]);
  });
});

describe('numeric OTEL_* variables', () => {
  it('take a blank value as unset', () => {
    for (const blank of ['', '   ']) {
      const settings = readOtelSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_BSP_SCHEDULE_DELAY: blank,
      });
      expect(settings.traces?.scheduleDelayMs).toBe(5000);
    }
  });

  it('take a span count of 0 as invalid, keeping the default', () => {
    const settings = readOtelSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_BSP_MAX_QUEUE_SIZE: '0',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '0',
    });
    expect(settings.traces).toMatchObject({ maxQueueSize: 2048, maxExportBatchSize: 512 });
  });
});

describe('the metrics protocol', () => {
  it('is protobuf by default', async () => {
    const receiver = await startReceiver();
    closers.push(() => receiver.close());
    const tracing = await startTracing(
      {
        OTEL_METRICS_EXPORTER: 'otlp',
        OTEL_TRACES_EXPORTER: 'none',
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${receiver.url}/v1/metrics`,
      },
      { providerName: 'anthropic' },
    );
    if (tracing === undefined) throw new Error('expected metrics to start');
    closers.push(() => tracing.shutdown());
    tracing.startExchange(START).end({
      record: {
        requestId: 'p',
        method: 'POST',
        path: '/v1/messages',
        provider: 'anthropic',
        status: 200,
        durationMs: 1,
      },
    });
    await tracing.shutdown();
    const metrics = receiver.exports.filter((entry) => entry.path === '/v1/metrics');
    expect(metrics.length).toBeGreaterThan(0);
    expect(metrics[0]!.contentType).toBe('application/x-protobuf');
  });
});
