/**
 * OpenTelemetry from `tpx serve`, against a real OTLP/HTTP receiver on loopback (a small `node:http`
 * server that records what the official OTLP exporters POST): with `http/json` the spans and metrics are
 * decoded and checked field by field — one GenAI span per exchange continuing the client's
 * `traceparent`, a child span per upstream attempt whose context reaches the upstream, and the GenAI
 * client histograms; with `http/protobuf` (the default) the export arrives as protobuf.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startServer } from '../../src/server/start-server.js';
import { startTracing, type Tracing } from '../../src/telemetry/tracing.js';
import { createTransport } from '../../src/transport/create-transport.js';
import {
  attributes,
  histogramPoints,
  spansOf,
  traceRequests,
  startReceiver,
  type OtlpValue,
} from '../helpers/otlp-receiver.js';
import { startScriptedServer, step, textMessage, type ScriptedServer } from '../helpers/scripted-server.js';
import { sendOneLinePrompt } from './serve-support.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function tracedProxy(env: Record<string, string>, upstream: ScriptedServer) {
  const tracing = (await startTracing(env, { providerName: 'anthropic', version: '0.0.0-test' })) as Tracing;
  expect(tracing).toBeDefined();
  const transport = createTransport({
    env: {},
    anthropicApiKey: 'sk-ant-tracing',
    anthropicBaseUrl: upstream.url,
    sleep: () => Promise.resolve(),
  });
  const server = await startServer({ transport, port: 0, logger: false, telemetry: tracing });
  closers.push(async () => {
    await server.close();
    await transport.close();
  });
  return { tracing, server };
}

const CLIENT_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN_ID = '00f067aa0ba902b7';

describe('OpenTelemetry over OTLP/HTTP', () => {
  it.each(['http/json', 'http/protobuf'])(
    'exports a GenAI span per exchange, continuing the client trace, with a child span per attempt (%s)',
    async (protocol) => {
      const receiver = await startReceiver();
      closers.push(() => receiver.close());
      const upstream = await startScriptedServer([
        step.json({ type: 'error', error: { type: 'overloaded_error', message: 'busy' } }, { status: 529 }),
        step.json(textMessage('traced answer')),
      ]);
      closers.push(() => upstream.close());
      const { tracing, server } = await tracedProxy(
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: protocol,
          OTEL_SERVICE_NAME: 'tpx-under-test',
        },
        upstream,
      );
      const response = await fetch(`${server.url}/v1/messages`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          traceparent: `00-${CLIENT_TRACE_ID}-${CLIENT_SPAN_ID}-01`,
        },
        body: JSON.stringify({
          model: 'claude-test',
          max_tokens: 32,
          messages: [{ role: 'user', content: 'Hi' }],
        }),
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      await tracing.shutdown();

      const spans = spansOf(receiver);
      const exchange = spans.find((span) => span.name === 'chat claude-test')!;
      expect(exchange).toBeDefined();
      expect(exchange.traceId).toBe(CLIENT_TRACE_ID);
      expect(exchange.parentSpanId).toBe(CLIENT_SPAN_ID);
      expect(exchange.kind).toBe(2); // SERVER
      expect(attributes(exchange)).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': 'claude-test',
        'gen_ai.response.model': 'claude-test',
        'gen_ai.usage.input_tokens': 9,
        'gen_ai.usage.output_tokens': 3,
        'gen_ai.response.finish_reasons': ['end_turn'],
        'http.response.status_code': 200,
      });
      expect(attributes(exchange)['error.type']).toBeUndefined();

      const attempts = spans.filter((span) => span.parentSpanId === exchange.spanId);
      expect(attempts.map((span) => span.name).sort()).toEqual(['chat attempt 1', 'chat attempt 2']);
      const [first, second] = ['chat attempt 1', 'chat attempt 2'].map((name) =>
        attempts.find((span) => span.name === name)!,
      );
      expect(first!.kind).toBe(3); // CLIENT
      expect(attributes(first!)).toMatchObject({
        'error.type': 'MODEL_EHTTP',
        'http.response.status_code': 529,
      });
      expect(first!.status?.code).toBe(2); // ERROR
      expect(attributes(second!)).toMatchObject({
        'http.response.status_code': 200,
        'gen_ai.request.model': 'claude-test',
      });

      // Each upstream attempt carried its own span's context.
      expect(upstream.requests.map((request) => request.headers['traceparent'])).toEqual([
        `00-${CLIENT_TRACE_ID}-${first!.spanId}-01`,
        `00-${CLIENT_TRACE_ID}-${second!.spanId}-01`,
      ]);

      const [request] = traceRequests(receiver);
      expect(receiver.exports.find((entry) => entry.path === '/v1/traces')!.contentType).toBe(
        protocol === 'http/json' ? 'application/json' : 'application/x-protobuf',
      );
      expect(attributes(request!.resourceSpans[0]!.resource)['service.name']).toBe('tpx-under-test');
      expect(request!.resourceSpans[0]!.scopeSpans[0]!.scope.name).toBe('tpx-transport');

      const metrics = receiver.exports
        .filter((entry) => entry.path === '/v1/metrics')
        .flatMap((entry) => {
          const body = JSON.parse(entry.body.toString('utf8')) as {
            resourceMetrics: {
              scopeMetrics: {
                metrics: {
                  name: string;
                  unit: string;
                  histogram: {
                    dataPoints: { attributes: { key: string; value: OtlpValue }[]; sum: number }[];
                  };
                }[];
              }[];
            }[];
          };
          return body.resourceMetrics.flatMap((resource) =>
            resource.scopeMetrics.flatMap((scope) => scope.metrics),
          );
        });
      const usage = metrics.find((metric) => metric.name === 'gen_ai.client.token.usage')!;
      expect(usage.unit).toBe('{token}');
      const byType = Object.fromEntries(
        usage.histogram.dataPoints.map((point) => [attributes(point)['gen_ai.token.type'], point.sum]),
      );
      expect(byType).toEqual({ input: 9, output: 3 });
      const duration = metrics.find((metric) => metric.name === 'gen_ai.client.operation.duration')!;
      expect(duration.unit).toBe('s');
      expect(attributes(duration.histogram.dataPoints[0]!)).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'claude-test',
      });
    },
  );

  it('marks a failed exchange with error.type and an error status', async () => {
    const receiver = await startReceiver();
    closers.push(() => receiver.close());
    const upstream = await startScriptedServer([
      step.json({ type: 'error', error: { type: 'invalid_request_error', message: 'no' } }, { status: 400 }),
    ]);
    closers.push(() => upstream.close());
    const { tracing, server } = await tracedProxy(
      {
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      },
      upstream,
    );
    const response = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'claude-test',
        max_tokens: 32,
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    });
    expect(response.status).toBe(400);
    await tracing.shutdown();
    const exchange = spansOf(receiver).find((span) => span.name === 'chat claude-test')!;
    expect(attributes(exchange)['error.type']).toBe('MODEL_EHTTP');
    expect(exchange.status?.code).toBe(2);
    // A new trace: no client context came in.
    expect(exchange.parentSpanId ?? '').toBe('');
    // Only traces were configured.
    expect(receiver.exports.some((entry) => entry.path === '/v1/metrics')).toBe(false);
  });

  it('exports a span batch as soon as OTEL_BSP_MAX_EXPORT_BATCH_SIZE spans wait, long before the schedule delay', async () => {
    const receiver = await startReceiver();
    closers.push(() => receiver.close());
    const upstream = await startScriptedServer([step.json(textMessage())]);
    closers.push(() => upstream.close());
    const { server } = await tracedProxy(
      {
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '600000',
        // The exchange's span and its attempt's: one exchange fills the batch.
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2',
      },
      upstream,
    );
    const response = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'claude-batch',
        max_tokens: 32,
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    });
    await response.arrayBuffer();
    // No shutdown, no flush: with the default batch of 512 nothing would leave for ten minutes.
    const deadline = Date.now() + 10_000;
    while (spansOf(receiver).length < 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(
      spansOf(receiver)
        .map((span) => span.name)
        .sort(),
    ).toEqual(['chat attempt 1', 'chat claude-batch']);
  });

  it('adds exchanges of one series to one data point of each GenAI histogram, and keeps other series apart', async () => {
    const receiver = await startReceiver();
    closers.push(() => receiver.close());
    const upstream = await startScriptedServer([
      step.json(textMessage('one')),
      step.json(textMessage('two')),
      step.json({ type: 'error', error: { type: 'invalid_request_error', message: 'no' } }, { status: 400 }),
    ]);
    closers.push(() => upstream.close());
    const { tracing, server } = await tracedProxy(
      {
        OTEL_METRICS_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${receiver.url}/v1/metrics`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      },
      upstream,
    );
    for (const model of ['claude-same', 'claude-same', 'claude-other']) {
      const response = await fetch(`${server.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model, max_tokens: 32, messages: [{ role: 'user', content: 'Hi' }] }),
      });
      await response.arrayBuffer();
    }
    await tracing.shutdown();
    const describePoints = (name: string) => histogramPoints(receiver, name);
    const usage = describePoints('gen_ai.client.token.usage');
    expect(usage).toEqual([
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': 'claude-same',
        'gen_ai.response.model': 'claude-same',
        'gen_ai.token.type': 'input',
        count: 2,
        sum: 18,
      },
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': 'claude-same',
        'gen_ai.response.model': 'claude-same',
        'gen_ai.token.type': 'output',
        count: 2,
        sum: 6,
      },
    ]);
    const durations = describePoints('gen_ai.client.operation.duration').map(
      ({ sum: _sum, ...point }) => point,
    );
    expect(durations).toEqual([
      {
        'error.type': 'MODEL_EHTTP',
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': 'claude-other',
        'gen_ai.response.model': 'claude-other',
        count: 1,
      },
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': 'claude-same',
        'gen_ai.response.model': 'claude-same',
        count: 2,
      },
    ]);
  });

  it('exports protobuf by default', async () => {
    const receiver = await startReceiver();
    closers.push(() => receiver.close());
    const upstream = await startScriptedServer([step.json(textMessage())]);
    closers.push(() => upstream.close());
    const { tracing, server } = await tracedProxy({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, upstream);
    const response = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'claude-proto',
        max_tokens: 32,
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    });
    await response.arrayBuffer();
    await tracing.shutdown();
    const traces = receiver.exports.filter((entry) => entry.path === '/v1/traces');
    expect(traces.length).toBeGreaterThan(0);
    expect(traces[0]!.contentType).toBe('application/x-protobuf');
    const spans = spansOf(receiver);
    const exchange = spans.find((span) => span.name === 'chat claude-proto');
    expect(attributes(exchange!)).toMatchObject({ 'gen_ai.request.model': 'claude-proto' });
    expect(spans.find((span) => span.parentSpanId === exchange!.spanId)?.name).toBe('chat attempt 1');
  });

  it('names each process with its own service.instance.id, unless OTEL_RESOURCE_ATTRIBUTES sets one', async () => {
    const receiver = await startReceiver();
    closers.push(() => receiver.close());
    const upstream = await startScriptedServer([
      step.json(textMessage('first')),
      step.json(textMessage('second')),
      step.json(textMessage('third')),
    ]);
    closers.push(() => upstream.close());
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    };
    /** The resources of what one process (one worker of --workers, one replica) exports. */
    const exportsOfOneProcess = async () => {
      const before = receiver.exports.length;
      const { tracing, server } = await tracedProxy(env, upstream);
      expect(await sendOneLinePrompt(server.url)).toBe(200);
      await tracing.shutdown();
      return receiver.exports.slice(before).map((entry) => {
        const body = JSON.parse(entry.body.toString('utf8')) as {
          resourceSpans?: { resource: { attributes: { key: string; value: OtlpValue }[] } }[];
          resourceMetrics?: { resource: { attributes: { key: string; value: OtlpValue }[] } }[];
        };
        const [first] = body.resourceSpans ?? body.resourceMetrics ?? [];
        const resource: Record<string, unknown> = { path: entry.path, ...attributes(first!.resource) };
        return resource;
      });
    };

    const one = await exportsOfOneProcess();
    const other = await exportsOfOneProcess();
    // Spans and histograms of one process carry one id; the two processes' ids differ.
    for (const exported of [one, other]) {
      expect(exported.map((entry) => entry['path']).sort()).toStrictEqual(['/v1/metrics', '/v1/traces']);
      expect(new Set(exported.map((entry) => entry['service.instance.id'])).size).toBe(1);
      expect(exported[0]!['service.instance.id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(exported[0]!['service.name']).toBe('tpx-serve');
    }
    expect(one[0]!['service.instance.id']).not.toBe(other[0]!['service.instance.id']);

    vi.stubEnv('OTEL_RESOURCE_ATTRIBUTES', 'service.instance.id=pod-7f9c,k8s.pod.name=pod-7f9c');
    try {
      const named = await exportsOfOneProcess();
      for (const entry of named) {
        expect([entry['service.instance.id'], entry['k8s.pod.name']]).toStrictEqual(['pod-7f9c', 'pod-7f9c']);
      }
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
