/**
 * Which exchanges `tpx serve` traces, as the standard `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`
 * say: read into the settings (the specification's default is `parentbased_always_on`; an invalid ratio
 * is ignored; a sampler the process cannot apply on its own is refused at start-up), and applied to real
 * exchanges through the proxy, seen from a real OTLP/HTTP receiver and from the upstream, which learns
 * the trace and its sampled flag whether or not the exchange was recorded.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isTransportError, type TransportError } from '../../src/errors.js';
import { startServer } from '../../src/server/start-server.js';
import { readOtelSettings, startTracing, type Tracing } from '../../src/telemetry/tracing.js';
import { createTransport } from '../../src/transport/create-transport.js';
import { spansOf, startReceiver, type Receiver } from '../helpers/otlp-receiver.js';
import { startScriptedServer, step, textMessage } from '../helpers/scripted-server.js';

const ENDPOINT = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' };

function samplerOf(env: Record<string, string>) {
  return readOtelSettings({ ...ENDPOINT, ...env }).traces?.sampler;
}

function refusal(env: Record<string, string>): TransportError {
  try {
    readOtelSettings({ ...ENDPOINT, ...env });
  } catch (error) {
    if (isTransportError(error)) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('readOtelSettings: the sampler', () => {
  it('follows the parent and traces every root exchange unless told otherwise', () => {
    expect(samplerOf({})).toStrictEqual({ name: 'parentbased_always_on' });
    expect(samplerOf({ OTEL_TRACES_SAMPLER: '  ' })).toStrictEqual({ name: 'parentbased_always_on' });
  });

  it('reads every sampler the specification names that needs no remote service, in any case', () => {
    expect(samplerOf({ OTEL_TRACES_SAMPLER: 'ALWAYS_OFF' })).toStrictEqual({ name: 'always_off' });
    expect(samplerOf({ OTEL_TRACES_SAMPLER: ' always_on ' })).toStrictEqual({ name: 'always_on' });
    expect(samplerOf({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' })).toStrictEqual({
      name: 'parentbased_always_off',
    });
    expect(samplerOf({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })).toStrictEqual(
      { name: 'traceidratio', ratio: 0.25 },
    );
    expect(
      samplerOf({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: ' 0 ' }),
    ).toStrictEqual({ name: 'parentbased_traceidratio', ratio: 0 });
  });

  it('keeps every trace when the ratio is missing or not a number from 0 to 1, and ignores it for other samplers', () => {
    for (const given of [undefined, '', '1.5', '-0.1', 'half', 'Infinity']) {
      const env: Record<string, string> = { OTEL_TRACES_SAMPLER: 'traceidratio' };
      if (given !== undefined) env['OTEL_TRACES_SAMPLER_ARG'] = given;
      expect(samplerOf(env), `OTEL_TRACES_SAMPLER_ARG=${given}`).toStrictEqual({
        name: 'traceidratio',
        ratio: 1,
      });
    }
    expect(samplerOf({ OTEL_TRACES_SAMPLER: 'always_on', OTEL_TRACES_SAMPLER_ARG: '0.5' })).toStrictEqual({
      name: 'always_on',
    });
  });

  it('refuses a sampler it cannot apply with MODEL_ECONFIG, naming the value and those it supports', () => {
    const error = refusal({ OTEL_TRACES_SAMPLER: 'parentbased_jaeger_remote' });
    expect(error.code).toBe('MODEL_ECONFIG');
    expect(error.message).toBe(
      'OTEL_TRACES_SAMPLER is "parentbased_jaeger_remote": tpx serve supports always_on, always_off, ' +
        'traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio',
    );
  });

  it('reads no sampler when traces are off', () => {
    expect(
      readOtelSettings({ OTEL_TRACES_SAMPLER: 'xray', OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://m/x' })
        .traces,
    ).toBeUndefined();
  });
});

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN_ID = '00f067aa0ba902b7';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/**
 * Sends one exchange through a traced proxy whose tracing `env` configures, with the given
 * `traceparent` (or none), and returns the spans the receiver got and the `traceparent` the upstream saw.
 */
async function exchangeThrough(
  env: Record<string, string>,
  traceparent: string | undefined,
): Promise<{ spanNames: string[]; traceIds: string[]; upstreamTraceparent: unknown }> {
  const receiver: Receiver = await startReceiver();
  closers.push(() => receiver.close());
  const upstream = await startScriptedServer([step.json(textMessage('sampled or not'))]);
  closers.push(() => upstream.close());
  const tracing = (await startTracing(
    {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      ...env,
    },
    { providerName: 'anthropic' },
  )) as Tracing;
  const transport = createTransport({
    env: {},
    anthropicApiKey: 'sk-ant-sampling',
    anthropicBaseUrl: upstream.url,
  });
  const server = await startServer({ transport, port: 0, logger: false, telemetry: tracing });
  closers.push(async () => {
    await server.close();
    await transport.close();
  });
  const response = await fetch(`${server.url}/v1/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(traceparent === undefined ? {} : { traceparent }),
    },
    body: JSON.stringify({
      model: 'claude-test',
      max_tokens: 8,
      messages: [{ role: 'user', content: 'Hi' }],
    }),
  });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  await tracing.shutdown();
  const spans = spansOf(receiver);
  return {
    spanNames: spans.map((span) => span.name).sort(),
    traceIds: [...new Set(spans.map((span) => span.traceId))],
    upstreamTraceparent: upstream.requests[0]?.headers['traceparent'],
  };
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

describe('OTEL_TRACES_SAMPLER applied to exchanges through tpx serve', () => {
  it('records nothing under always_off, yet tells the upstream the trace is not sampled', async () => {
    const seen = await exchangeThrough({ OTEL_TRACES_SAMPLER: 'always_off' }, undefined);
    expect(seen.spanNames).toStrictEqual([]);
    const match = TRACEPARENT.exec(String(seen.upstreamTraceparent));
    expect(match?.[3]).toBe('00');
  });

  it('keeps the caller’s trace id on an unsampled exchange, and its flag', async () => {
    const seen = await exchangeThrough(
      { OTEL_TRACES_SAMPLER: 'parentbased_always_on' },
      `00-${TRACE_ID}-${CLIENT_SPAN_ID}-00`,
    );
    expect(seen.spanNames).toStrictEqual([]);
    const match = TRACEPARENT.exec(String(seen.upstreamTraceparent));
    expect(match?.[1]).toBe(TRACE_ID);
    expect(match?.[3]).toBe('00');
  });

  it('follows a sampled caller under parentbased_traceidratio even at ratio 0, with the attempt span', async () => {
    const seen = await exchangeThrough(
      { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' },
      `00-${TRACE_ID}-${CLIENT_SPAN_ID}-01`,
    );
    expect(seen.spanNames).toStrictEqual(['chat attempt 1', 'chat claude-test']);
    expect(seen.traceIds).toStrictEqual([TRACE_ID]);
    expect(String(seen.upstreamTraceparent)).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
  });

  it('drops a root exchange under parentbased_traceidratio at ratio 0', async () => {
    const seen = await exchangeThrough(
      { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' },
      undefined,
    );
    expect(seen.spanNames).toStrictEqual([]);
    expect(TRACEPARENT.exec(String(seen.upstreamTraceparent))?.[3]).toBe('00');
  });

  it('decides by its own ratio under traceidratio, whatever the caller sampled', async () => {
    const dropped = await exchangeThrough(
      { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' },
      `00-${TRACE_ID}-${CLIENT_SPAN_ID}-01`,
    );
    expect(dropped.spanNames).toStrictEqual([]);
    const kept = await exchangeThrough(
      { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' },
      `00-${TRACE_ID}-${CLIENT_SPAN_ID}-00`,
    );
    expect(kept.spanNames).toStrictEqual(['chat attempt 1', 'chat claude-test']);
    expect(kept.traceIds).toStrictEqual([TRACE_ID]);
  });

  it('records an exchange without a parent by default, and its attempt', async () => {
    const seen = await exchangeThrough({}, undefined);
    expect(seen.spanNames).toStrictEqual(['chat attempt 1', 'chat claude-test']);
    expect(TRACEPARENT.exec(String(seen.upstreamTraceparent))?.[3]).toBe('01');
  });
});
