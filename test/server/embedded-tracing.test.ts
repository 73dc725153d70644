/**
 * An application that embeds `startServer` (`tpx-transport/server`) and runs an OpenTelemetry SDK of its
 * own gets the proxy's spans inside its own traces: the proxy writes them through `@opentelemetry/api`
 * alone, so the application's tracer provider records them and its propagator carries their context,
 * with no `OTEL_*` variable and nothing of tpx's own SDK set-up involved. Read back from an in-memory
 * exporter, over real HTTP on loopback.
 */
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTransport } from '../../src/index.js';
import { startServer } from '../../src/server/index.js';
import { startScriptedServer, step, textMessage, type ScriptedServer } from '../helpers/scripted-server.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(() => {
  // What an application's own OpenTelemetry set-up registers.
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
afterAll(async () => {
  trace.disable();
  propagation.disable();
  await provider.shutdown();
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  exporter.reset();
});

/** An embedded proxy in front of `upstream`, started as an application would, with no telemetry option. */
async function embeddedProxy(upstream: ScriptedServer) {
  const transport = createTransport({
    env: {},
    anthropicApiKey: 'sk-ant-embedded',
    anthropicBaseUrl: upstream.url,
    sleep: () => Promise.resolve(),
  });
  const server = await startServer({ transport, port: 0, logger: false });
  closers.push(async () => {
    await server.close();
    await transport.close();
  });
  return server;
}

async function post(url: string, headers: Record<string, string>): Promise<number> {
  const response = await fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({
      model: 'claude-test',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'Hi' }],
    }),
  });
  await response.arrayBuffer();
  return response.status;
}

function named(spans: ReadableSpan[], name: string): ReadableSpan {
  const found = spans.find((span) => span.name === name);
  if (found === undefined)
    throw new Error(`no span ${name} among ${spans.map((span) => span.name).join(', ')}`);
  return found;
}

describe('startServer in an application with its own OpenTelemetry SDK', () => {
  it("records the exchange span under the application's span, and each attempt's span under it, whose context reaches the upstream", async () => {
    const upstream = await startScriptedServer([
      step.json({ type: 'error', error: { type: 'overloaded_error', message: 'busy' } }, { status: 529 }),
      step.json(textMessage('embedded answer')),
    ]);
    closers.push(() => upstream.close());
    const server = await embeddedProxy(upstream);

    // The application calls the proxy from within a span of its own, its propagator writing the context.
    const appSpan = trace.getTracer('embedding-app').startSpan('answer the user');
    const headers: Record<string, string> = {};
    propagation.inject(trace.setSpan(context.active(), appSpan), headers);
    expect(await post(server.url, headers)).toBe(200);
    appSpan.end();

    const spans = exporter.getFinishedSpans();
    const { traceId, spanId: appSpanId } = appSpan.spanContext();
    const exchange = named(spans, 'chat claude-test');
    expect(exchange.spanContext().traceId).toBe(traceId);
    expect(exchange.parentSpanContext?.spanId).toBe(appSpanId);
    expect(exchange.kind).toBe(SpanKind.SERVER);
    expect(exchange.instrumentationScope.name).toBe('tpx-transport');
    expect(exchange.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-test',
      'gen_ai.response.model': 'claude-test',
      'gen_ai.usage.input_tokens': 9,
      'gen_ai.usage.output_tokens': 3,
      'gen_ai.response.finish_reasons': ['end_turn'],
      'http.request.method': 'POST',
      'url.path': '/v1/messages',
      'http.response.status_code': 200,
    });

    const [first, second] = ['chat attempt 1', 'chat attempt 2'].map((name) => named(spans, name));
    for (const attempt of [first!, second!]) {
      expect(attempt.kind).toBe(SpanKind.CLIENT);
      expect(attempt.spanContext().traceId).toBe(traceId);
      expect(attempt.parentSpanContext?.spanId).toBe(exchange.spanContext().spanId);
    }
    expect(first!.attributes).toMatchObject({
      'http.response.status_code': 529,
      'error.type': 'MODEL_EHTTP',
    });
    expect(first!.status.code).toBe(SpanStatusCode.ERROR);
    expect(second!.attributes).toMatchObject({ 'http.response.status_code': 200, 'tpx.attempt': 2 });
    // The application's propagator wrote each attempt's own context into its upstream request.
    expect(upstream.requests.map((request) => request.headers['traceparent'])).toStrictEqual([
      `00-${traceId}-${first!.spanContext().spanId}-01`,
      `00-${traceId}-${second!.spanContext().spanId}-01`,
    ]);
  });

  it('starts a trace of its own in the application’s provider for a request that carries no context', async () => {
    const upstream = await startScriptedServer([step.json(textMessage('root answer'))]);
    closers.push(() => upstream.close());
    const server = await embeddedProxy(upstream);
    expect(await post(server.url, {})).toBe(200);
    const spans = exporter.getFinishedSpans();
    const exchange = named(spans, 'chat claude-test');
    expect(exchange.parentSpanContext).toBeUndefined();
    expect(named(spans, 'chat attempt 1').spanContext().traceId).toBe(exchange.spanContext().traceId);
    // The exchange and its one attempt, nothing else.
    expect(spans.map((span) => span.name).sort()).toStrictEqual(['chat attempt 1', 'chat claude-test']);
  });
});
