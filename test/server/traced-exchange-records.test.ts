/**
 * What OpenTelemetry records of one exchange, driven through `startTracing`'s per-exchange telemetry
 * (the calls `tpx serve` makes: start, each upstream attempt's start and end, the end) and read back from
 * a real OTLP/HTTP receiver on loopback: the token counts it can trust and none it cannot, the duration in
 * seconds, attempts that overlap, the model the upstream answered with, and an exchange with metrics on
 * and traces off.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { ExchangeRecord } from '../../src/server/logger.js';
import { startTracing, type Tracing } from '../../src/server/tracing.js';
import {
  attributes,
  histogramPoints,
  spansOf,
  startReceiver,
  type Receiver,
} from '../helpers/otlp-receiver.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function traced(
  signals: 'traces' | 'metrics' | 'both',
): Promise<{ tracing: Tracing; receiver: Receiver }> {
  const receiver = await startReceiver();
  closers.push(() => receiver.close());
  const env: Record<string, string> = { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
  if (signals !== 'metrics') env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] = `${receiver.url}/v1/traces`;
  if (signals !== 'traces') env['OTEL_EXPORTER_OTLP_METRICS_ENDPOINT'] = `${receiver.url}/v1/metrics`;
  const tracing = (await startTracing(env, { providerName: 'openai-compatible' })) as Tracing;
  return { tracing, receiver };
}

function record(fields: Partial<ExchangeRecord>): ExchangeRecord {
  return {
    requestId: 'req_records',
    method: 'POST',
    path: '/v1/messages',
    provider: 'tpx',
    status: 200,
    durationMs: 1,
    model: 'claude-records',
    stream: false,
    attempts: 1,
    ...fields,
  };
}

const START = { method: 'POST', path: '/v1/messages', headers: {} };

describe('the GenAI token histogram', () => {
  it('records the counts an exchange reported, and none that is missing, negative or not finite', async () => {
    const { tracing, receiver } = await traced('metrics');
    for (const usage of [
      { input_tokens: 7, output_tokens: 0 },
      { output_tokens: -1 },
      { input_tokens: Number.NaN, output_tokens: Number.POSITIVE_INFINITY },
      { input_tokens: -3 },
    ]) {
      tracing.startExchange(START).end({ record: record({ usage }) });
    }
    await tracing.shutdown();
    expect(
      histogramPoints(receiver, 'gen_ai.client.token.usage').map((point) => [
        point['gen_ai.token.type'],
        point['count'],
        point['sum'],
      ]),
    ).toStrictEqual([
      ['input', 1, 7],
      ['output', 1, 0],
    ]);
  });
});

describe('the GenAI duration histogram', () => {
  it('records the time from the start of the exchange to its end, in seconds', async () => {
    const { tracing, receiver } = await traced('metrics');
    const exchange = tracing.startExchange(START);
    const startedAt = performance.now();
    await sleep(120);
    exchange.end({ record: record({}) });
    const elapsedSeconds = (performance.now() - startedAt) / 1000;
    await tracing.shutdown();
    const [point, ...others] = histogramPoints(receiver, 'gen_ai.client.operation.duration');
    expect(others).toStrictEqual([]);
    expect(point?.['count']).toBe(1);
    const seconds = point?.['sum'] as number;
    expect(seconds).toBeGreaterThanOrEqual(0.1);
    expect(seconds).toBeLessThanOrEqual(elapsedSeconds);
  });
});

describe('attempt spans', () => {
  it('names each attempt’s span by its number and provider, and ends overlapping attempts each with its own outcome', async () => {
    const { tracing, receiver } = await traced('traces');
    const exchange = tracing.startExchange(START);
    const observer = exchange.observer!;
    const first = observer.onAttemptStart?.({ number: 1, provider: 'tpx' });
    const second = observer.onAttemptStart?.({ number: 2, provider: 'tpx' });
    expect(first?.['traceparent']).not.toBe(second?.['traceparent']);
    observer.onAttemptEnd?.({
      number: 1,
      provider: 'tpx',
      status: 503,
      durationMs: 5,
      upstreamModel: 'model-a',
    });
    observer.onAttemptEnd?.({ number: 2, provider: 'tpx', durationMs: 6 });
    exchange.end({ record: record({}) });
    await tracing.shutdown();

    const spans = spansOf(receiver);
    const byName = new Map(spans.map((span) => [span.name, attributes(span)]));
    expect(byName.get('chat attempt 1')).toStrictEqual({
      'gen_ai.provider.name': 'openai-compatible',
      'tpx.attempt': 1,
      'gen_ai.request.model': 'model-a',
      'http.response.status_code': 503,
    });
    expect(byName.get('chat attempt 2')).toStrictEqual({
      'gen_ai.provider.name': 'openai-compatible',
      'tpx.attempt': 2,
    });
    // The model the upstream answered with is the last one an attempt named.
    expect(byName.get('chat claude-records')?.['gen_ai.response.model']).toBe('model-a');
    expect(spans).toHaveLength(3);
  });

  it('ends an attempt the transport never ended when the exchange ends, so its span is exported', async () => {
    const { tracing, receiver } = await traced('traces');
    const exchange = tracing.startExchange(START);
    exchange.observer?.onAttemptStart?.({ number: 1, provider: 'tpx' });
    exchange.observer?.onAttemptStart?.({ number: 2, provider: 'tpx' });
    exchange.end({ record: record({}) });
    await tracing.shutdown();
    expect(
      spansOf(receiver)
        .map((span) => span.name)
        .sort(),
    ).toStrictEqual(['chat attempt 1', 'chat attempt 2', 'chat claude-records']);
  });

  it('ignores the end of an attempt it never saw start', async () => {
    const { tracing, receiver } = await traced('traces');
    const exchange = tracing.startExchange(START);
    exchange.observer?.onAttemptEnd?.({ number: 4, provider: 'tpx', status: 200, durationMs: 1 });
    exchange.end({ record: record({}) });
    await tracing.shutdown();
    expect(spansOf(receiver).map((span) => span.name)).toStrictEqual(['chat claude-records']);
  });
});

describe('metrics without traces', () => {
  it('sends no traceparent upstream and still records the exchange', async () => {
    const { tracing, receiver } = await traced('metrics');
    const exchange = tracing.startExchange({
      ...START,
      headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
    });
    expect(exchange.observer?.onAttemptStart?.({ number: 1, provider: 'tpx' })).toBeUndefined();
    exchange.observer?.onAttemptEnd?.({ number: 1, provider: 'tpx', status: 200, durationMs: 1 });
    exchange.end({ record: record({ usage: { input_tokens: 3, output_tokens: 2 } }) });
    await tracing.shutdown();
    expect(receiver.exports.filter((entry) => entry.path === '/v1/traces')).toStrictEqual([]);
    expect(
      histogramPoints(receiver, 'gen_ai.client.operation.duration').map((point) => point['count']),
    ).toStrictEqual([1]);
  });
});
