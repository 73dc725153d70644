/**
 * The GenAI client histograms aggregated by tpx: where a value lands among the buckets, which token
 * counts are recorded, the bound on series, what two collects in a row report (cumulative and delta),
 * and what a real OTLP receiver gets through the SDK's periodic reader.
 */
import type { HrTime } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  DataPointType,
  MeterProvider,
  PeriodicExportingMetricReader,
  type HistogramMetricData,
} from '@opentelemetry/sdk-metrics';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  DURATION_BUCKETS_SECONDS,
  GenAiHistograms,
  MAX_SERIES,
  TOKEN_BUCKETS,
} from '../../src/server/genai-histograms.js';
import { startTracing } from '../../src/server/tracing.js';
import { attributes, startReceiver, type OtlpValue } from '../helpers/otlp-receiver.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A clock the test moves: one second per reading, from 1,000 s after the epoch. */
function steppingClock(): () => HrTime {
  let seconds = 1000;
  return () => [seconds++, 0];
}

function histograms(options: { temporality?: AggregationTemporality; now?: () => HrTime } = {}) {
  return new GenAiHistograms({
    providerName: 'anthropic',
    version: '1.2.3',
    resource: resourceFromAttributes({ 'service.name': 'test' }),
    sdk: { AggregationTemporality, DataPointType },
    now: options.now ?? steppingClock(),
    ...(options.temporality === undefined ? {} : { temporality: options.temporality }),
  });
}

/** The collected histogram named `name`, or undefined when it has no points. */
async function collected(producer: GenAiHistograms, name: string): Promise<HistogramMetricData | undefined> {
  const { resourceMetrics, errors } = await producer.collect();
  expect(errors).toStrictEqual([]);
  const metric = resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .find((each) => each.descriptor.name === name);
  return metric as HistogramMetricData | undefined;
}

/** Records a chat exchange of `claude-x` with these durations and token counts. */
function chat(
  producer: GenAiHistograms,
  seconds: number,
  input?: number,
  output?: number,
  model = 'claude-x',
): void {
  producer.record('chat', model, 'up', undefined, seconds, input, output);
}

describe('the GenAI histograms aggregated by tpx', () => {
  it('count a value equal to a boundary in that boundary’s bucket, and one above the last in the last', async () => {
    const producer = histograms();
    for (const seconds of [0, 0.01, 0.010001, 0.02, 81.92, 81.93, 1000]) chat(producer, seconds);
    for (const tokens of [0, 1, 4, 5, 67108864, 67108865]) chat(producer, 0.5, tokens);
    const duration = await collected(producer, 'gen_ai.client.operation.duration');
    const durationPoint = duration!.dataPoints[0]!;
    expect(durationPoint.value.buckets.boundaries).toStrictEqual([...DURATION_BUCKETS_SECONDS]);
    const expectedDurations = Array.from({ length: DURATION_BUCKETS_SECONDS.length + 1 }, () => 0);
    // 0 and 0.01 in the first; 0.010001 and 0.02 in the second; 0.5 (the token records) in (0.32, 0.64];
    // 81.92 in the last bounded one; 81.93 and 1000 above.
    expectedDurations[0] = 2;
    expectedDurations[1] = 2;
    expectedDurations[6] = 6;
    expectedDurations[13] = 1;
    expectedDurations[14] = 2;
    expect(durationPoint.value.buckets.counts).toStrictEqual(expectedDurations);

    const tokens = await collected(producer, 'gen_ai.client.token.usage');
    const tokenPoint = tokens!.dataPoints[0]!;
    expect(tokenPoint.value.buckets.boundaries).toStrictEqual([...TOKEN_BUCKETS]);
    const expectedTokens = Array.from({ length: TOKEN_BUCKETS.length + 1 }, () => 0);
    expectedTokens[0] = 2; // 0 and 1
    expectedTokens[1] = 1; // 4
    expectedTokens[2] = 1; // 5
    expectedTokens[13] = 1; // 67108864, the last boundary
    expectedTokens[14] = 1; // above it
    expect(tokenPoint.value.buckets.counts).toStrictEqual(expectedTokens);
  });

  it('record no token count that is negative, not a number, infinite or absent, and record zero', async () => {
    const producer = histograms();
    for (const odd of [-1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, undefined]) {
      chat(producer, 0.1, odd, odd);
    }
    expect(await collected(producer, 'gen_ai.client.token.usage')).toBeUndefined();
    expect((await collected(producer, 'gen_ai.client.operation.duration'))!.dataPoints[0]!.value.count).toBe(
      5,
    );
    chat(producer, 0.1, 0, 7);
    const points = (await collected(producer, 'gen_ai.client.token.usage'))!.dataPoints;
    expect(
      points.map((point) => [point.attributes['gen_ai.token.type'], point.value.count, point.value.sum]),
    ).toStrictEqual([
      ['input', 1, 0],
      ['output', 1, 7],
    ]);
  });

  it('report count, sum, min and max of each series, with the attributes it knows, in the order first recorded', async () => {
    const producer = histograms();
    chat(producer, 0.5, 10, 3);
    producer.record('list_models', undefined, undefined, undefined, 0.002, undefined, undefined);
    chat(producer, 1.5, 30, 1);
    producer.record('chat', 'claude-y', undefined, 'MODEL_EUPSTREAM', 0.25, undefined, undefined);
    const duration = await collected(producer, 'gen_ai.client.operation.duration');
    expect(duration).toMatchObject({
      descriptor: {
        name: 'gen_ai.client.operation.duration',
        unit: 's',
        description: 'GenAI operation duration.',
      },
      aggregationTemporality: AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.HISTOGRAM,
    });
    expect(
      duration!.dataPoints.map((point) => ({
        attributes: point.attributes,
        count: point.value.count,
        sum: point.value.sum,
        min: point.value.min,
        max: point.value.max,
      })),
    ).toStrictEqual([
      {
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'anthropic',
          'gen_ai.request.model': 'claude-x',
          'gen_ai.response.model': 'up',
        },
        count: 2,
        sum: 2,
        min: 0.5,
        max: 1.5,
      },
      {
        attributes: { 'gen_ai.operation.name': 'list_models', 'gen_ai.provider.name': 'anthropic' },
        count: 1,
        sum: 0.002,
        min: 0.002,
        max: 0.002,
      },
      {
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'anthropic',
          'gen_ai.request.model': 'claude-y',
          'error.type': 'MODEL_EUPSTREAM',
        },
        count: 1,
        sum: 0.25,
        min: 0.25,
        max: 0.25,
      },
    ]);
    const tokens = await collected(producer, 'gen_ai.client.token.usage');
    expect(tokens!.descriptor).toMatchObject({
      name: 'gen_ai.client.token.usage',
      unit: '{token}',
      description: 'Number of input and output tokens used.',
    });
    expect(
      tokens!.dataPoints.map((point) => [
        point.attributes['gen_ai.token.type'],
        point.value.count,
        point.value.sum,
        point.value.min,
        point.value.max,
      ]),
    ).toStrictEqual([
      ['input', 2, 40, 10, 30],
      ['output', 2, 4, 1, 3],
    ]);
  });

  it('keep counting across collects (cumulative), each series from when it was first recorded', async () => {
    const producer = histograms();
    chat(producer, 0.5, 10, 3); // the clock reads 1000 s (duration), 1001 s, 1002 s (tokens)
    const first = await collected(producer, 'gen_ai.client.operation.duration'); // 1003 s
    chat(producer, 0.5, 10, 3);
    chat(producer, 2, undefined, undefined, 'claude-later'); // first recorded at 1004 s
    const second = await collected(producer, 'gen_ai.client.operation.duration');
    expect(
      first!.dataPoints.map((point) => [point.value.count, point.startTime, point.endTime]),
    ).toStrictEqual([[1, [1000, 0], [1003, 0]]]);
    expect(
      second!.dataPoints.map((point) => [point.value.count, point.value.sum, point.startTime]),
    ).toStrictEqual([
      [2, 1, [1000, 0]],
      [1, 2, [1004, 0]],
    ]);
    // What the first collect handed out is a copy: the later records did not change it.
    expect(first!.dataPoints[0]!.value.buckets.counts.reduce((sum, count) => sum + count, 0)).toBe(1);
  });

  it('report only what is new since the previous collect when the exporter asks for delta', async () => {
    const producer = histograms({ temporality: AggregationTemporality.DELTA });
    chat(producer, 0.5, 10, 3);
    chat(producer, 0.5, 10, 3, 'claude-quiet');
    const first = await collected(producer, 'gen_ai.client.operation.duration');
    chat(producer, 0.75, 20, 4);
    const second = await collected(producer, 'gen_ai.client.operation.duration');
    expect(first!.aggregationTemporality).toBe(AggregationTemporality.DELTA);
    expect(first!.dataPoints.map((point) => point.value.count)).toStrictEqual([1, 1]);
    expect(second!.dataPoints).toHaveLength(1);
    const point = second!.dataPoints[0]!;
    expect([point.value.count, point.value.sum, point.value.min, point.value.max]).toStrictEqual([
      1, 0.75, 0.75, 0.75,
    ]);
    expect(point.startTime).toStrictEqual(first!.dataPoints[0]!.endTime);
  });

  it('keep at most MAX_SERIES series and count the rest in one overflow series per histogram', async () => {
    const producer = histograms();
    for (let index = 0; index < MAX_SERIES + 3; index++) chat(producer, 0.1, 5, 2, `model-${index}`);
    chat(producer, 0.1, 5, 2, 'model-0'); // a known series still counts as itself
    const duration = (await collected(producer, 'gen_ai.client.operation.duration'))!.dataPoints;
    expect(duration).toHaveLength(MAX_SERIES + 1);
    expect(duration[0]!.value.count).toBe(2);
    expect(duration.at(-1)!.attributes).toStrictEqual({ 'otel.metric.overflow': true });
    expect(duration.at(-1)!.value.count).toBe(3);
    const tokens = (await collected(producer, 'gen_ai.client.token.usage'))!.dataPoints;
    expect(tokens).toHaveLength(2 * MAX_SERIES + 1);
    expect(tokens.at(-1)!.attributes).toStrictEqual({ 'otel.metric.overflow': true });
    expect([tokens.at(-1)!.value.count, tokens.at(-1)!.value.sum]).toStrictEqual([6, 21]);
  });

  it('hand the reader nothing while nothing was recorded, then one scope named tpx-transport', async () => {
    const producer = histograms();
    expect((await producer.collect()).resourceMetrics.scopeMetrics).toStrictEqual([]);
    chat(producer, 0.1);
    const { scopeMetrics } = (await producer.collect()).resourceMetrics;
    expect(scopeMetrics.map((scope) => scope.scope)).toStrictEqual([
      { name: 'tpx-transport', version: '1.2.3' },
    ]);
    expect(scopeMetrics[0]!.metrics.map((metric) => metric.descriptor.name)).toStrictEqual([
      'gen_ai.client.operation.duration',
    ]);
  });

  it('reach a real OTLP receiver through the SDK’s periodic reader with their buckets, min, max and start time', async () => {
    const receiver = await startReceiver();
    closers.push(() => receiver.close());
    const resource = resourceFromAttributes({ 'service.name': 'genai-test' });
    const producer = new GenAiHistograms({
      providerName: 'anthropic',
      resource,
      sdk: { AggregationTemporality, DataPointType },
    });
    const provider = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({
          exporter: new OTLPMetricExporter({ url: `${receiver.url}/v1/metrics` }),
          exportIntervalMillis: 60_000,
          metricProducers: [producer],
        }),
      ],
    });
    const before = Date.now();
    chat(producer, 0.03, 100, 20);
    chat(producer, 0.05, 300, 40);
    await provider.shutdown();
    const body = JSON.parse(
      receiver.exports.find((entry) => entry.path === '/v1/metrics')!.body.toString('utf8'),
    ) as {
      resourceMetrics: {
        resource: { attributes: { key: string; value: OtlpValue }[] };
        scopeMetrics: {
          scope: { name: string };
          metrics: {
            name: string;
            histogram: {
              aggregationTemporality: number;
              dataPoints: {
                attributes: { key: string; value: OtlpValue }[];
                startTimeUnixNano: string;
                timeUnixNano: string;
                count: string;
                sum: number;
                min: number;
                max: number;
                bucketCounts: string[];
                explicitBounds: number[];
              }[];
            };
          }[];
        }[];
      }[];
    };
    const [resourceMetrics] = body.resourceMetrics;
    expect(attributes(resourceMetrics!.resource)['service.name']).toBe('genai-test');
    const metrics = resourceMetrics!.scopeMetrics.flatMap((scope) => scope.metrics);
    const duration = metrics.find((metric) => metric.name === 'gen_ai.client.operation.duration')!;
    // 2 is OTLP's AGGREGATION_TEMPORALITY_CUMULATIVE.
    expect(duration.histogram.aggregationTemporality).toBe(2);
    const [point] = duration.histogram.dataPoints;
    expect({
      count: Number(point!.count),
      sum: point!.sum,
      min: point!.min,
      max: point!.max,
      buckets: point!.bucketCounts.map(Number),
      bounds: point!.explicitBounds,
    }).toStrictEqual({
      count: 2,
      sum: 0.08,
      min: 0.03,
      max: 0.05,
      buckets: [0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
      bounds: [...DURATION_BUCKETS_SECONDS],
    });
    const startMs = Number(BigInt(point!.startTimeUnixNano) / 1_000_000n);
    expect(startMs).toBeGreaterThanOrEqual(before - 1);
    expect(BigInt(point!.timeUnixNano)).toBeGreaterThanOrEqual(BigInt(point!.startTimeUnixNano));
    const usage = metrics.find((metric) => metric.name === 'gen_ai.client.token.usage')!;
    expect(
      usage.histogram.dataPoints.map((each) => [
        attributes(each)['gen_ai.token.type'],
        Number(each.count),
        each.sum,
        each.min,
        each.max,
      ]),
    ).toStrictEqual([
      ['input', 2, 400, 100, 300],
      ['output', 2, 60, 20, 40],
    ]);
  });

  it('go out as delta when the exporter is asked for delta, as the SDK’s instruments did', async () => {
    const receiver = await startReceiver();
    closers.push(() => receiver.close());
    vi.stubEnv('OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE', 'delta');
    try {
      const tracing = await startTracing(
        {
          OTEL_METRICS_EXPORTER: 'otlp',
          OTEL_TRACES_EXPORTER: 'none',
          OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${receiver.url}/v1/metrics`,
          OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json',
        },
        { providerName: 'anthropic' },
      );
      if (tracing === undefined) throw new Error('expected metrics to start');
      const exchange = tracing.startExchange({ method: 'GET', path: '/v1/models', headers: {} });
      exchange.end({
        record: {
          requestId: 'a',
          method: 'GET',
          path: '/v1/models',
          provider: 'anthropic',
          status: 200,
          durationMs: 1,
        },
      });
      await tracing.shutdown();
    } finally {
      vi.unstubAllEnvs();
    }
    const body = JSON.parse(
      receiver.exports.find((entry) => entry.path === '/v1/metrics')!.body.toString('utf8'),
    ) as {
      resourceMetrics: {
        scopeMetrics: { metrics: { name: string; histogram: { aggregationTemporality: number } }[] }[];
      }[];
    };
    const metrics = body.resourceMetrics.flatMap((resource) =>
      resource.scopeMetrics.flatMap((scope) => scope.metrics),
    );
    // 1 is OTLP's AGGREGATION_TEMPORALITY_DELTA.
    expect(metrics.map((metric) => [metric.name, metric.histogram.aggregationTemporality])).toStrictEqual([
      ['gen_ai.client.operation.duration', 1],
    ]);
  });
});
