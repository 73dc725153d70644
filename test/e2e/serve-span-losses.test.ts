/**
 * What the span export loses shows in `tpx serve`'s Prometheus metrics: with tracing on beside the
 * metrics (as `tpx serve` starts them, `startObservability`), span batches a collector refuses are
 * counted in `tpx_trace_exports_failed_total` at the next scrape, and `tpx_trace_spans_dropped_total`
 * is there to alert on, while exchanges go on being answered.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { deferredTransportObserver, startObservability } from '../../src/cli/serve-operations.js';
import { startServer } from '../../src/server/start-server.js';
import { createTransport } from '../../src/transport/create-transport.js';
import { startReceiver } from '../helpers/otlp-receiver.js';
import { startScriptedServer, step, textMessage } from '../helpers/scripted-server.js';
import { eventually } from './serve-support.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** The value of the unlabelled sample `name` in a scrape, or undefined. */
function valueOf(scrape: string, name: string): number | undefined {
  const line = scrape.split('\n').find((each) => each.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

describe('span export losses in /metrics', () => {
  it('counts the span batches a collector refused, and still answers every exchange', async () => {
    const collector = await startReceiver({ refuseWith: 400 });
    closers.push(() => collector.close());
    const upstream = await startScriptedServer([
      step.json(textMessage('first')),
      step.json(textMessage('second')),
    ]);
    closers.push(() => upstream.close());
    const observer = deferredTransportObserver();
    const transport = createTransport({
      env: {},
      anthropicApiKey: 'sk-ant-span-losses',
      anthropicBaseUrl: upstream.url,
      observer,
    });
    const observability = await startObservability({
      operations: { workers: 1, metrics: true },
      selection: transport.selection,
      env: {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/v1/traces`,
        // Every span leaves at once, in a batch of its own.
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '1',
      },
      host: '127.0.0.1',
      isWorker: false,
      observer,
    });
    const server = await startServer({
      transport,
      port: 0,
      logger: false,
      ...(observability.telemetry === undefined ? {} : { telemetry: observability.telemetry }),
      ...(observability.metrics === undefined ? {} : { metrics: observability.metrics }),
    });
    closers.push(async () => {
      await server.close();
      await observability.close();
      await transport.close();
    });

    const scrape = async () => (await fetch(`${server.url}/metrics`)).text();
    expect(valueOf(await scrape(), 'tpx_trace_exports_failed_total')).toBe(0);
    expect(valueOf(await scrape(), 'tpx_trace_spans_dropped_total')).toBe(0);
    for (const text of ['Hi', 'Hi again']) {
      const response = await fetch(`${server.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'claude-test',
          max_tokens: 16,
          messages: [{ role: 'user', content: text }],
        }),
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    // Two exchanges, each an exchange span and an attempt span: four batches of one, all refused.
    const losses = observability.tracing?.spanExportLosses;
    expect(losses).toBeDefined();
    await eventually(() => collector.exports.length === 4 && losses!.failedExports === 4);
    const final = await scrape();
    expect(valueOf(final, 'tpx_trace_exports_failed_total')).toBe(4);
    expect(valueOf(final, 'tpx_trace_spans_dropped_total')).toBe(0);
    expect(collector.exports.every((each) => each.path === '/v1/traces')).toBe(true);
  });
});
