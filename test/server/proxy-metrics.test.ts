/**
 * The proxy's Prometheus metrics, read back from their registry sample by sample: which counter,
 * histogram and gauge each exchange, attempt, stream and token refresh moves, with which labels, and
 * how client-chosen and upstream-reported values are kept within bounds.
 */
import { describe, expect, it } from 'vitest';
import { TransportError } from '../../src/errors.js';
import {
  createProxyMetrics,
  MAX_LABEL_LENGTH,
  MAX_LABEL_VALUES,
  type ProxyMetrics,
} from '../../src/telemetry/metrics.js';
import type { ExchangeRecord } from '../../src/server/logger.js';
import type { ExchangeStart } from '../../src/telemetry/exchange-telemetry.js';

interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** Every sample of metric `name`, without the histogram bucket lines. */
async function samplesOf(metrics: ProxyMetrics, name: string): Promise<Sample[]> {
  const all = await metrics.registry.getMetricsAsJSON();
  const metric = all.find((entry) => entry.name === name);
  if (metric === undefined) throw new Error(`no metric ${name}`);
  return (metric.values as Sample[]).filter(
    (sample) => sample.metricName === undefined || !sample.metricName.endsWith('_bucket'),
  );
}

/** The samples of `name` as `labels → value`, labels in a fixed order, for exact comparison. */
async function table(metrics: ProxyMetrics, name: string): Promise<Record<string, number>> {
  const rows: Record<string, number> = {};
  for (const sample of await samplesOf(metrics, name)) {
    const key = [
      ...(sample.metricName === undefined ? [] : [sample.metricName]),
      ...Object.keys(sample.labels)
        .sort()
        .map((label) => `${label}=${String(sample.labels[label])}`),
    ].join(' ');
    rows[key] = sample.value;
  }
  return rows;
}

/** An exchange's start, as the handler reports it. */
function at(path: string): ExchangeStart {
  return { method: 'POST', path, headers: {} };
}

function record(overrides: Partial<ExchangeRecord> = {}): ExchangeRecord {
  return {
    requestId: 'req_1',
    method: 'POST',
    path: '/v1/messages',
    provider: 'tpx',
    status: 200,
    durationMs: 1500,
    ...overrides,
  };
}

function metricsWithoutProcess(provider: 'tpx' | 'anthropic' = 'tpx'): ProxyMetrics {
  return createProxyMetrics({ provider, collectProcessMetrics: false });
}

describe('tpx_requests_total', () => {
  it('counts an exchange by route, status, provider, requested model and the model the upstream was sent', async () => {
    const metrics = metricsWithoutProcess();
    const exchange = metrics.startExchange(at('/v1/messages'));
    exchange.observer?.onAttemptEnd?.({
      number: 1,
      provider: 'tpx',
      status: 200,
      upstreamModel: 'served-7b',
      durationMs: 5,
    });
    exchange.end({ record: record({ model: 'claude-sonnet' }) });
    expect(await table(metrics, 'tpx_requests_total')).toStrictEqual({
      'model=claude-sonnet provider=tpx route=/v1/messages status=200 upstream_model=served-7b': 1,
    });
  });

  it('labels a missing model and a missing upstream model none, and keeps the last upstream model of several attempts', async () => {
    const metrics = metricsWithoutProcess();
    metrics.startExchange(at('/v1/models')).end({ record: record({ path: '/v1/models', status: 401 }) });
    const retried = metrics.startExchange(at('/v1/messages'));
    retried.observer?.onAttemptEnd?.({
      number: 1,
      provider: 'tpx',
      status: 503,
      upstreamModel: 'first',
      durationMs: 1,
    });
    retried.observer?.onAttemptEnd?.({ number: 2, provider: 'tpx', status: 200, durationMs: 1 });
    retried.end({ record: record({ model: '' }) });
    expect(await table(metrics, 'tpx_requests_total')).toStrictEqual({
      'model=none provider=tpx route=/v1/models status=401 upstream_model=none': 1,
      'model=none provider=tpx route=/v1/messages status=200 upstream_model=first': 1,
    });
  });

  it('counts each of the proxy’s own routes by name and every other path as other', async () => {
    const metrics = metricsWithoutProcess();
    for (const path of [
      '/v1/messages',
      '/v1/messages/count_tokens',
      '/v1/models',
      '/healthz',
      '/readyz',
      '/metrics',
      '/v1/complete',
      '/',
    ]) {
      metrics.startExchange(at(path)).end({ record: record({ path, model: 'm' }) });
    }
    const routes = (await samplesOf(metrics, 'tpx_requests_total')).map((sample) => [
      sample.labels['route'],
      sample.value,
    ]);
    expect(routes).toStrictEqual([
      ['/v1/messages', 1],
      ['/v1/messages/count_tokens', 1],
      ['/v1/models', 1],
      ['/healthz', 1],
      ['/readyz', 1],
      ['/metrics', 1],
      ['other', 2],
    ]);
  });

  it(`keeps at most ${MAX_LABEL_VALUES} models of at most ${MAX_LABEL_LENGTH} characters, counting the rest as other`, async () => {
    const metrics = metricsWithoutProcess();
    const end = (model: string) =>
      metrics.startExchange(at('/v1/messages')).end({ record: record({ model }) });
    end('x'.repeat(MAX_LABEL_LENGTH));
    end('y'.repeat(MAX_LABEL_LENGTH + 1));
    for (let index = 1; index < MAX_LABEL_VALUES; index++) end(`model-${index}`);
    end('one-too-many');
    // A model already seen is still counted by name once the set is full.
    end('model-1');
    const counts = new Map(
      (await samplesOf(metrics, 'tpx_requests_total')).map((sample) => [
        sample.labels['model'],
        sample.value,
      ]),
    );
    expect(counts.size).toBe(MAX_LABEL_VALUES + 1);
    expect(counts.get('x'.repeat(MAX_LABEL_LENGTH))).toBe(1);
    expect(counts.get('model-1')).toBe(2);
    expect(counts.get('model-99')).toBe(1);
    expect(counts.get('other')).toBe(2);
    expect(counts.has('one-too-many')).toBe(false);
  });

  it('bounds the upstream model label on its own', async () => {
    const metrics = metricsWithoutProcess();
    const exchange = metrics.startExchange(at('/v1/messages'));
    exchange.observer?.onAttemptEnd?.({
      number: 1,
      provider: 'tpx',
      status: 200,
      upstreamModel: 'u'.repeat(MAX_LABEL_LENGTH + 1),
      durationMs: 1,
    });
    exchange.end({ record: record({ model: 'short' }) });
    const [sample] = await samplesOf(metrics, 'tpx_requests_total');
    expect([sample?.labels['model'], sample?.labels['upstream_model']]).toStrictEqual(['short', 'other']);
  });
});

describe('tpx_exchange_duration_seconds and tpx_time_to_first_byte_seconds', () => {
  it('observe seconds by route, provider and stream flag, and the first byte only when it is known', async () => {
    const metrics = metricsWithoutProcess('anthropic');
    metrics.startExchange(at('/v1/messages')).end({
      record: record({ provider: 'anthropic', stream: true, durationMs: 2500 }),
      timeToFirstByteMs: 40,
    });
    metrics
      .startExchange(at('/v1/messages'))
      .end({ record: record({ provider: 'anthropic', durationMs: 500 }) });
    expect(await table(metrics, 'tpx_exchange_duration_seconds')).toStrictEqual({
      'tpx_exchange_duration_seconds_sum provider=anthropic route=/v1/messages stream=true': 2.5,
      'tpx_exchange_duration_seconds_count provider=anthropic route=/v1/messages stream=true': 1,
      'tpx_exchange_duration_seconds_sum provider=anthropic route=/v1/messages stream=false': 0.5,
      'tpx_exchange_duration_seconds_count provider=anthropic route=/v1/messages stream=false': 1,
    });
    expect(await table(metrics, 'tpx_time_to_first_byte_seconds')).toStrictEqual({
      'tpx_time_to_first_byte_seconds_sum provider=anthropic route=/v1/messages stream=true': 0.04,
      'tpx_time_to_first_byte_seconds_count provider=anthropic route=/v1/messages stream=true': 1,
    });
  });

  it('puts durations in the documented buckets', async () => {
    const metrics = metricsWithoutProcess();
    metrics
      .startExchange(at('/v1/messages'))
      .end({ record: record({ durationMs: 700 }), timeToFirstByteMs: 30 });
    const all = await metrics.registry.getMetricsAsJSON();
    const buckets = (name: string) =>
      (all.find((entry) => entry.name === name)?.values as Sample[])
        .filter((sample) => sample.metricName?.endsWith('_bucket') === true)
        .map((sample) => [sample.labels['le'], sample.value]);
    expect(buckets('tpx_exchange_duration_seconds')).toStrictEqual([
      [0.05, 0],
      [0.1, 0],
      [0.25, 0],
      [0.5, 0],
      [1, 1],
      [2.5, 1],
      [5, 1],
      [10, 1],
      [30, 1],
      [60, 1],
      [120, 1],
      [300, 1],
      [600, 1],
      ['+Inf', 1],
    ]);
    expect(buckets('tpx_time_to_first_byte_seconds')).toStrictEqual([
      [0.01, 0],
      [0.025, 0],
      [0.05, 1],
      [0.1, 1],
      [0.25, 1],
      [0.5, 1],
      [1, 1],
      [2.5, 1],
      [5, 1],
      [10, 1],
      [30, 1],
      [60, 1],
      [120, 1],
      ['+Inf', 1],
    ]);
  });
});

describe('tpx_tokens_total', () => {
  it('adds each usage field under its type, by provider and requested model', async () => {
    const metrics = metricsWithoutProcess();
    metrics.startExchange(at('/v1/messages')).end({
      record: record({
        model: 'big',
        usage: {
          input_tokens: 12,
          output_tokens: 7,
          cache_creation_input_tokens: 3,
          cache_read_input_tokens: 100,
        },
      }),
    });
    metrics
      .startExchange(at('/v1/messages'))
      .end({ record: record({ model: 'big', usage: { input_tokens: 8, output_tokens: 1 } }) });
    expect(await table(metrics, 'tpx_tokens_total')).toStrictEqual({
      'model=big provider=tpx type=input': 20,
      'model=big provider=tpx type=output': 8,
      'model=big provider=tpx type=cache_creation': 3,
      'model=big provider=tpx type=cache_read': 100,
    });
  });

  it('ignores zero, negative, infinite and missing counts from an untrusted upstream', async () => {
    const metrics = metricsWithoutProcess();
    metrics.startExchange(at('/v1/messages')).end({
      record: record({
        model: 'm',
        usage: {
          input_tokens: 0,
          output_tokens: -5,
          cache_creation_input_tokens: Number.POSITIVE_INFINITY,
          cache_read_input_tokens: Number.NaN,
        },
      }),
    });
    metrics.startExchange(at('/v1/messages')).end({ record: record({ model: 'm', usage: {} }) });
    expect(await table(metrics, 'tpx_tokens_total')).toStrictEqual({});
  });
});

describe('tpx_upstream_attempts_total, tpx_upstream_retries_total, tpx_errors_total', () => {
  it('counts attempts by status (error when none came back), retries from the second attempt on, and errors by code', async () => {
    const metrics = metricsWithoutProcess('anthropic');
    const exchange = metrics.startExchange(at('/v1/messages'));
    const failure = new TransportError('MODEL_ETRANSPORT', 'connection reset', { provider: 'anthropic' });
    for (const [number, status] of [
      [1, undefined],
      [2, 529],
      [3, 529],
    ] as const) {
      exchange.observer?.onAttemptStart?.({ number, provider: 'anthropic' });
      exchange.observer?.onAttemptEnd?.({
        number,
        provider: 'anthropic',
        ...(status === undefined ? { error: failure } : { status }),
        durationMs: 1,
      });
    }
    exchange.end({ record: record({ provider: 'anthropic', status: 529, error: 'MODEL_EHTTP' }) });
    expect(await table(metrics, 'tpx_upstream_attempts_total')).toStrictEqual({
      'provider=anthropic status=error': 1,
      'provider=anthropic status=529': 2,
    });
    expect(await table(metrics, 'tpx_upstream_retries_total')).toStrictEqual({ 'provider=anthropic': 2 });
    expect(await table(metrics, 'tpx_errors_total')).toStrictEqual({
      'code=MODEL_EHTTP provider=anthropic': 1,
    });
  });

  it('counts no retry and no error for a first attempt that succeeds', async () => {
    const metrics = metricsWithoutProcess();
    const exchange = metrics.startExchange(at('/v1/messages'));
    exchange.observer?.onAttemptStart?.({ number: 1, provider: 'tpx' });
    exchange.observer?.onAttemptEnd?.({ number: 1, provider: 'tpx', status: 200, durationMs: 1 });
    exchange.end({ record: record() });
    expect(await table(metrics, 'tpx_upstream_retries_total')).toStrictEqual({});
    expect(await table(metrics, 'tpx_errors_total')).toStrictEqual({});
  });
});

describe('tpx_open_streams', () => {
  it('shows 0 before the first stream, goes up when a stream opens and down when it ends', async () => {
    const metrics = metricsWithoutProcess();
    expect(await table(metrics, 'tpx_open_streams')).toStrictEqual({ 'provider=tpx': 0 });
    const first = metrics.startExchange(at('/v1/messages'));
    const second = metrics.startExchange(at('/v1/messages'));
    first.streamOpened();
    second.streamOpened();
    expect(await table(metrics, 'tpx_open_streams')).toStrictEqual({ 'provider=tpx': 2 });
    first.end({ record: record({ stream: true }) });
    expect(await table(metrics, 'tpx_open_streams')).toStrictEqual({ 'provider=tpx': 1 });
  });

  it('is not lowered by an exchange that never opened a stream', async () => {
    const metrics = metricsWithoutProcess();
    metrics.startExchange(at('/v1/messages')).streamOpened();
    metrics.startExchange(at('/v1/messages')).end({ record: record({ status: 400 }) });
    expect(await table(metrics, 'tpx_open_streams')).toStrictEqual({ 'provider=tpx': 1 });
  });
});

describe('tpx_token_refreshes_total', () => {
  it('counts token refreshes by source and outcome', async () => {
    const metrics = metricsWithoutProcess();
    metrics.transportObserver.onTokenRefresh?.({ source: 'file', outcome: 'refreshed' });
    metrics.transportObserver.onTokenRefresh?.({ source: 'file', outcome: 'refreshed' });
    metrics.transportObserver.onTokenRefresh?.({ source: 'command', outcome: 'failed' });
    expect(await table(metrics, 'tpx_token_refreshes_total')).toStrictEqual({
      'outcome=refreshed source=file': 2,
      'outcome=failed source=command': 1,
    });
  });
});

describe('the registry', () => {
  it('describes each metric in the scrape with its type and help text', async () => {
    const metrics = metricsWithoutProcess();
    const described = (await metrics.registry.getMetricsAsJSON()).map((metric) => [
      metric.name,
      metric.type,
      metric.help,
    ]);
    expect(described).toStrictEqual([
      [
        'tpx_requests_total',
        'counter',
        'Requests answered, by route, HTTP status, provider, requested model and upstream model.',
      ],
      [
        'tpx_exchange_duration_seconds',
        'histogram',
        'From request to the end of the answer (for a stream: its last frame), in seconds.',
      ],
      [
        'tpx_time_to_first_byte_seconds',
        'histogram',
        'From request to the moment the answer starts going out (for a stream: its first event), in seconds.',
      ],
      [
        'tpx_tokens_total',
        'counter',
        'Tokens reported by the upstream, by type: input, output, cache_creation, cache_read.',
      ],
      [
        'tpx_upstream_attempts_total',
        'counter',
        'Upstream attempts, by the status the upstream answered (error: none came back).',
      ],
      ['tpx_upstream_retries_total', 'counter', 'Upstream attempts that were retries of an earlier one.'],
      [
        'tpx_errors_total',
        'counter',
        'Exchanges that ended in an error, by MODEL_* code (also after a stream had started).',
      ],
      [
        'tpx_tool_call_repairs_total',
        'counter',
        'Tool calls delivered after a repair: arguments made JSON (syntax), scalars fitted to the schema ' +
          '(types), or a call the model wrote as text (text-call).',
      ],
      ['tpx_open_streams', 'gauge', 'Streamed answers in progress.'],
      [
        'tpx_token_refreshes_total',
        'counter',
        'Token refreshes after the upstream refused a token, by token source and outcome.',
      ],
    ]);
  });

  it('holds only the tpx_ metrics without process metrics, and prom-client’s process metrics by default', async () => {
    const bare = metricsWithoutProcess();
    expect((await bare.registry.getMetricsAsJSON()).map((metric) => metric.name)).toStrictEqual([
      'tpx_requests_total',
      'tpx_exchange_duration_seconds',
      'tpx_time_to_first_byte_seconds',
      'tpx_tokens_total',
      'tpx_upstream_attempts_total',
      'tpx_upstream_retries_total',
      'tpx_errors_total',
      'tpx_tool_call_repairs_total',
      'tpx_open_streams',
      'tpx_token_refreshes_total',
    ]);
    const full = createProxyMetrics({ provider: 'tpx' });
    const names = (await full.registry.getMetricsAsJSON()).map((metric) => metric.name);
    expect(names).toContain('process_cpu_user_seconds_total');
    expect(names).toContain('nodejs_eventloop_lag_seconds');
    expect(names).toContain('tpx_requests_total');
  });
});

describe('tpx_trace_spans_dropped_total, tpx_trace_exports_failed_total', () => {
  it('are absent until tracing is counted, then show what the span export lost as of each scrape', async () => {
    const metrics = createProxyMetrics({ provider: 'tpx', collectProcessMetrics: false });
    const names = async () => (await metrics.registry.getMetricsAsJSON()).map((metric) => metric.name);
    expect(await names()).not.toContain('tpx_trace_spans_dropped_total');
    const losses = { droppedSpans: 0, failedExports: 0 };
    metrics.countSpanExportLosses(losses);
    expect(await table(metrics, 'tpx_trace_spans_dropped_total')).toStrictEqual({ '': 0 });
    expect(await table(metrics, 'tpx_trace_exports_failed_total')).toStrictEqual({ '': 0 });
    losses.droppedSpans = 17;
    losses.failedExports = 2;
    expect(await table(metrics, 'tpx_trace_spans_dropped_total')).toStrictEqual({ '': 17 });
    expect(await table(metrics, 'tpx_trace_exports_failed_total')).toStrictEqual({ '': 2 });
    losses.failedExports = 3;
    const text = await metrics.registry.metrics();
    expect(text).toContain('tpx_trace_spans_dropped_total 17\n');
    expect(text).toContain('tpx_trace_exports_failed_total 3\n');
  });
});
