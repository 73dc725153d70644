/**
 * With routes, each attempt span names the upstream the attempt went to (`tpx.upstream`), so a fallback
 * shows in a trace as two attempts on two upstreams. Read back from a real OTLP/HTTP receiver.
 */
import { afterEach, expect, it } from 'vitest';
import { TransportError } from '../../src/errors.js';
import { startTracing } from '../../src/telemetry/tracing.js';
import { attributes, spansOf, startReceiver } from '../helpers/otlp-receiver.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

it('names the upstream of each attempt on its span', async () => {
  const receiver = await startReceiver();
  closers.push(() => receiver.close());
  const tracing = await startTracing(
    {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
    },
    { providerName: 'openai', version: '0.0.0-test' },
  );
  if (tracing === undefined) throw new Error('expected tracing to start');
  const exchange = tracing.startExchange({ method: 'POST', path: '/v1/messages', headers: {} });
  const observer = exchange.observer!;
  observer.onAttemptStart?.({ number: 1, provider: 'tpx' });
  observer.onAttemptEnd?.({
    number: 1,
    provider: 'tpx',
    status: 503,
    upstream: 'local',
    error: new TransportError('MODEL_EHTTP', 'unavailable', { status: 503 }),
    durationMs: 3,
  });
  observer.onAttemptStart?.({ number: 2, provider: 'tpx' });
  observer.onAttemptEnd?.({ number: 2, provider: 'tpx', status: 200, upstream: 'cloud', durationMs: 3 });
  exchange.end({
    record: {
      requestId: 'req_1',
      method: 'POST',
      path: '/v1/messages',
      provider: 'tpx',
      status: 200,
      durationMs: 9,
    },
  });
  await tracing.shutdown();
  const spans = spansOf(receiver);
  const upstreamOf = (name: string) => attributes(spans.find((span) => span.name === name)!)['tpx.upstream'];
  expect([upstreamOf('chat attempt 1'), upstreamOf('chat attempt 2')]).toEqual(['local', 'cloud']);
});
